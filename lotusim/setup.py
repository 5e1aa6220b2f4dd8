"""ament_python package `lotusim` (also pip-installable: `pip install -e lotusim`)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "lotusim"
MODULES = ["lotusim_core", "lotusim_physics", "lotusim_env", "lotusim_sensors", "lotusim_autonomy"]

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[f"{m}*" for m in MODULES]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config/vehicles", glob("config/vehicles/*.yaml")),
        (f"share/{PACKAGE}/config/scenarios", glob("config/scenarios/*.yaml")),
        (f"share/{PACKAGE}/config/hil", glob("config/hil/*.yaml")),
        (f"share/{PACKAGE}/config/dds", glob("config/dds/*.xml")),  # Fast DDS settings (launch_plan.dds_environment)
        (f"share/{PACKAGE}/config/world", glob("config/world/*.*")),  # coastlines (GeoJSON) and their README
        # Copernicus current-evaluation data (docs/validation.md): the folder's README/MANIFEST and each window
        *[
            (f"share/{PACKAGE}/{d.rstrip('/')}", glob(f"{d.rstrip('/')}/*.*"))
            for d in ["data/copernicus_brest", *sorted(glob("data/copernicus_brest/*/"))]
        ],
    ],
    # the console page (lotusim_core/console/web: HTML, JS, CSS and the vendored Leaflet)
    package_data={
        "lotusim_core.console": [
            "web/*.*",
            "web/vendor/*.*",
            "web/vendor/*/*.*",
            "web/vendor/*/LICENSE",
            "web/vendor/*/images/*.png",
        ]
    },
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="lotusim maintainers",
    maintainer_email="maintainers@lotusim.org",
    description="Marine fleet simulator for ROS 2",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            # The user CLI (`lotusim run SCENARIO`, `lotusim bench ...`) and one executable per node, so that
            # `ros2 run lotusim <node>` and launch files start the same code as the CLI.
            "lotusim = lotusim_core.cli:main",
            "current_server = lotusim_env.current_server:main",
            "dynamics = lotusim_physics.dynamics_node:main",
            "mas_server = lotusim_core.sim.mas_server:main",
            "console = lotusim_core.console.console_node:main",
            "sensor_publisher = lotusim_sensors.sensor_publisher:main",
            "waypoint_follower = lotusim_autonomy.waypoint_follower:main",
            "depth_heading_autopilot = lotusim_autonomy.depth_heading_autopilot:main",
            "controller_host = lotusim_autonomy.controller_host:main",
            "station_keeper = lotusim_autonomy.rov_controller:main",
            "usv_controller = lotusim_autonomy.usv_controller:main",
            "flight_controller = lotusim_autonomy.multirotor_controller:main",
        ],
    },
)
