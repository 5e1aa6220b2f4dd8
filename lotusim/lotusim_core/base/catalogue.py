"""The vehicle catalogue: load config/vehicles/<model>.yaml into a validated VehicleSpec.

Every file is checked completely at load time; each problem raises a CatalogueError (a ConfigError of
lotusim_core.base.validation, the one validator of every configuration) whose message names the file, the key
(dotted path, e.g. `thrusters[2].direction_frd`) and what was expected versus what was found. The file
format (keys, units, frames, defaults) is documented in docs/vehicles.md; conventions are those of
lotusim_core.base.vehicle_spec (SI, body FRD, origin CO, Fossen signs with positive magnitudes).

Physical checks follow Fossen, Handbook of Marine Craft Hydrodynamics and Motion Control, 2nd ed. (2021):
- M = M_RB + M_A symmetric positive definite (sec. 3.3 / 6.3), M_RB from lotusim_core.base.fossen;
- the inertia tensor about the CG symmetric positive definite and realisable: its principal moments obey the
  triangle inequality I_1 + I_2 >= I_3 (any real mass distribution does, since I_1 + I_2 - I_3 = 2 sum m z^2).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from lotusim_core.base.fossen import m_rb
from lotusim_core.base.paths import config_dir
from lotusim_core.base.validation import ConfigError, Validator, read_yaml_file
from lotusim_core.base.vehicle_spec import (
    AerialSpec,
    BodyLiftSpec,
    DeckSpec,
    FinSpec,
    HullBoxSpec,
    SurfaceHydrostatics,
    ThrusterSpec,
    VehicleSpec,
    WindSpec,
)

DOMAINS = ("underwater", "surface", "aerial")
THRUST_MODELS = ("quadratic", "t200", "glf", "rotor")
ROTOR_UNITS = ("rpm", "rps", "rad_s")
SPINS = ("ccw", "cw")
CURVE_UNITS = ("normalized",)
CORIOLIS_MODES = ("full", "no_munk", "off")
CURVE_KEYS = (
    "a_pos",
    "k_pos",
    "b_pos",
    "nu_pos",
    "c_pos",
    "m_pos",
    "a_neg",
    "k_neg",
    "b_neg",
    "nu_neg",
    "c_neg",
    "m_neg",
    "max_force_fwd_n",
    "max_force_rev_n",
    "deadband",
)

REQUIRED_KEYS = (
    "description",
    "domain",
    "mass_kg",
    "inertia_cg_kgm2",
    "cg_frd_m",
    "added_mass",
    "damping_linear",
    "damping_quadratic",
    "sources",
)
OPTIONAL_KEYS = (
    "name",
    "volume_m3",
    "cb_frd_m",
    "surface",
    "wind",
    "water_density_kgm3",
    "coriolis_added_mass",
    "coriolis_note",
    "thrusters",
    "thruster_defaults",
    "fins",
    "sensors",
    "hull_height_m",
    "body_lift",
    "aerial",
    "deck",
    "hull_box",
)
# physical keys that must be cited in `sources:` whenever present
CITED_KEYS = (
    "mass_kg",
    "inertia_cg_kgm2",
    "cg_frd_m",
    "volume_m3",
    "cb_frd_m",
    "added_mass",
    "damping_linear",
    "damping_quadratic",
    "surface",
    "wind",
    "thrusters",
    "fins",
    "hull_height_m",
    "body_lift",
    "aerial",
    "deck",
    "hull_box",
)

THRUSTER_REQUIRED = (
    "name",
    "position_frd_m",
    "direction_frd",
    "model",
    "command_unit",
    "command_min",
    "command_max",
    "time_constant_s",
)
ROTOR_REQUIRED = ("motor_constant", "moment_constant_m", "spin", "time_constant_down_s")
ROTOR_OPTIONAL = ("rotor_drag_coefficient", "rolling_moment_coefficient")
THRUSTER_OPTIONAL = ("diameter_m", "kt", "kt_reverse", "kq", "curve") + ROTOR_REQUIRED + ROTOR_OPTIONAL
FIN_REQUIRED = tuple(f.name for f in fields(FinSpec))
SURFACE_OPTIONAL = ("wave_points_frd",)
SURFACE_REQUIRED = tuple(f.name for f in fields(SurfaceHydrostatics) if f.name not in SURFACE_OPTIONAL)
WIND_REQUIRED = ("frontal_area_m2", "lateral_area_m2", "length_m", "cx", "cy", "cn")
WIND_OPTIONAL = ("air_density_kgm3",)
BODY_LIFT_REQUIRED = tuple(f.name for f in fields(BodyLiftSpec))
AERIAL_REQUIRED = ("contact_height_m",)
DECK_REQUIRED = ("height_m", "length_m", "beam_m")
DECK_OPTIONAL = ("centre_x_m", "centre_y_m")
HULL_BOX_REQUIRED = ("length_m", "beam_m", "height_m")
HULL_BOX_OPTIONAL = ("centre_frd_m",)
AERIAL_OPTIONAL = ("air_density_kgm3",)
# keys of the water that an aerial vehicle does not take
NOT_AERIAL = ("volume_m3", "cb_frd_m", "surface", "wind")

_CACHE: dict[Path, tuple[bytes, VehicleSpec]] = {}

SYMMETRY_TOL = 1e-9  # relative tolerance on matrix symmetry
UNIT_TOL = 1e-3  # |norm - 1| accepted for axis vectors (files write 0.70710678); vectors are then normalised
ROLL_POSITION_TOL = 1e-3  # m, off-axis fin position vs its roll angle


class CatalogueError(ConfigError):
    """A vehicle file (or an override) is malformed: the message names file, key and reason
    (lotusim_core.base.validation)."""


class UnknownModelError(CatalogueError):
    """No vehicle file for a model name or path (a worker answers UNKNOWN_MODEL, not INVALID_OVERRIDES)."""


# ---------------------------------------------------------------------------------------------- public API


def vehicles_dir() -> Path:
    """Directory of the shipped vehicle files (config/vehicles)."""
    return config_dir() / "vehicles"


def list_models() -> list[str]:
    """Names of the shipped vehicle models (file stems in config/vehicles), sorted."""
    return sorted(p.stem for p in vehicles_dir().glob("*.yaml"))


def describe_models() -> list[tuple[str, str, str]]:
    """(name, domain, description) of every shipped model; each file is fully validated on the way."""
    return [(s.name, s.domain, s.description) for s in (load_vehicle(n) for n in list_models())]


def load_vehicle(name_or_path: str | Path) -> VehicleSpec:
    """Load and validate one vehicle: a model name (config/vehicles/<name>.yaml) or a path to a YAML file.

    Results are cached per file content, so spawning many vessels of one model parses its file once; the
    returned spec is frozen and its arrays are read-only, so sharing it is safe.
    """
    path = _resolve(name_or_path)
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise CatalogueError(str(path), "<file>", f"cannot be read: {exc.strerror or exc}") from exc
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == content:
        return cached[1]
    spec = spec_from_mapping(read_vehicle_mapping(path), where=str(path), default_name=path.stem)
    _CACHE[path] = (content, spec)
    return spec


def read_vehicle_mapping(path: str | Path) -> dict[str, Any]:
    """The raw YAML mapping of a vehicle file (not validated), for tools that merge overrides."""
    data = read_yaml_file(path, CatalogueError)
    if not isinstance(data, dict):
        raise CatalogueError(str(path), "<file>", f"expected a mapping at top level, found {type(data).__name__}")
    return data


def apply_overrides(spec_or_mapping: VehicleSpec | Mapping[str, Any], overrides: Mapping[str, Any]) -> VehicleSpec:
    """Merge a scenario's / spawn request's overrides over a vehicle and validate the result again.

    Mappings merge recursively (`surface: {draft_m: 0.2}` changes one key). `thrusters` and `fins` may be given
    either as a full list (replaces the list) or as a mapping from a thruster/fin name to the keys to change
    (`thrusters: {propeller: {time_constant_s: 0.5}}`). Any other value replaces the file's value. Errors name
    the overridden vehicle and the key.
    """
    if isinstance(spec_or_mapping, VehicleSpec):
        base = spec_to_mapping(spec_or_mapping)
        name = spec_or_mapping.name
    else:
        base = copy.deepcopy(dict(spec_or_mapping))
        name = str(base.get("name", "vehicle"))
    where = f"overrides of {name}"
    if not isinstance(overrides, Mapping):
        raise CatalogueError(where, "<overrides>", f"expected a mapping, found {type(overrides).__name__}")
    merged = _merge(base, overrides, where, "")
    return spec_from_mapping(merged, where=where, default_name=name)


def spec_to_mapping(spec: VehicleSpec) -> dict[str, Any]:
    """The YAML-form mapping of a VehicleSpec (full matrices as nested lists); loads back to an equal spec."""
    out: dict[str, Any] = {}
    for f in fields(VehicleSpec):
        value = getattr(spec, f.name)
        if f.name == "thrusters":
            out[f.name] = [_thruster_mapping(t) for t in value]
        elif f.name == "fins":
            out[f.name] = [_plain(_dataclass_dict(fin)) for fin in value]
        elif f.name in ("surface", "wind", "body_lift", "aerial", "deck", "hull_box"):
            if value is not None:
                out[f.name] = {k: v for k, v in _plain(_dataclass_dict(value)).items() if v is not None}
        elif f.name in ("volume_m3", "cb_frd_m") and spec.domain != "underwater" and not np.any(value):
            continue  # not given in the file (surface vessels use `surface`)
        elif f.name == "hull_height_m" and value == 0.0:
            continue  # not given in the file (surface crossing not modelled)
        else:
            out[f.name] = _plain(value)
    return out


def _thruster_mapping(t: ThrusterSpec) -> dict[str, Any]:
    """The file form of one thruster: only the keys its thrust model takes."""
    out = _plain(_dataclass_dict(t))
    if t.model != "rotor":
        for k in ROTOR_REQUIRED + ROTOR_OPTIONAL:
            out.pop(k)
    if t.model in ("quadratic", "rotor"):
        out.pop("curve")
    if t.model == "rotor":
        for k in ("kt", "diameter_m"):
            out.pop(k)
    elif t.model != "quadratic":
        for k in ("kt", "diameter_m"):
            if out[k] == 0.0:
                out.pop(k)
    if out["kt_reverse"] is None:
        out.pop("kt_reverse")
    return out


def rigid_body_mass_matrix(spec: VehicleSpec) -> np.ndarray:
    """M_RB (6x6) about CO of a vehicle file's mass, inertia about the CG and r_g (lotusim_core.base.fossen)."""
    return m_rb(spec.mass_kg, spec.inertia_cg_kgm2, spec.cg_frd_m)


# ------------------------------------------------------------------------------------------- file -> spec


def spec_from_mapping(data: Mapping[str, Any], where: str, default_name: str) -> VehicleSpec:
    """Validate a vehicle mapping (the YAML form) and build the VehicleSpec; `where` names it in errors."""
    v = _Validator(where)
    v.mapping(data, "", OPTIONAL_KEYS, required=REQUIRED_KEYS, none_ok=False)
    name = v.stripped(data.get("name", default_name), "name")
    description = v.stripped(data["description"], "description")
    domain = v.choice(data["domain"], "domain", DOMAINS)
    mass = v.positive(data["mass_kg"], "mass_kg")
    inertia = v.matrix(data["inertia_cg_kgm2"], "inertia_cg_kgm2", 3)
    cg = v.array(data["cg_frd_m"], "cg_frd_m", 3)
    added_mass = v.matrix(data["added_mass"], "added_mass", 6)
    d_lin = v.matrix(data["damping_linear"], "damping_linear", 6)
    d_quad = v.matrix(data["damping_quadratic"], "damping_quadratic", 6)
    rho = v.positive(data.get("water_density_kgm3", 1025.0), "water_density_kgm3")
    v.inertia(inertia, "inertia_cg_kgm2")
    v.symmetric(added_mass, "added_mass", "the added-mass matrix M_A")
    for key, d in (("damping_linear", d_lin), ("damping_quadratic", d_quad)):
        v.nonnegative_diagonal(d, key)

    volume, cb, surface = 0.0, np.zeros(3), None
    if domain == "underwater":
        if "volume_m3" not in data:
            raise v.fail("volume_m3", "missing: an underwater vehicle needs its displaced volume")
        if "cb_frd_m" not in data:
            raise v.fail("cb_frd_m", "missing: an underwater vehicle needs its centre of buoyancy")
    if "volume_m3" in data:
        volume = v.positive(data["volume_m3"], "volume_m3")
    if "cb_frd_m" in data:
        cb = v.array(data["cb_frd_m"], "cb_frd_m", 3)
    if domain == "surface":
        if "surface" not in data:
            raise v.fail("surface", "missing: a surface vessel needs its hydrostatics mapping")
        surface = _surface(v, data["surface"])
        if "wind" not in data:
            raise v.fail("wind", "missing: a surface vessel needs wind areas and coefficients")
    wind = _wind(v, data["wind"]) if "wind" in data else None
    hull_height, body_lift = _hull(v, data, domain)
    aerial = _aerial(v, data, domain)
    deck = _deck(v, data, domain)
    hull_box = _hull_box(v, data)
    if aerial is not None and np.any(added_mass):
        raise v.fail("added_mass", "an aerial vehicle has no added mass (air): expected zeros")

    coriolis = v.choice(data.get("coriolis_added_mass", "full"), "coriolis_added_mass", CORIOLIS_MODES)
    note = v.stripped(data.get("coriolis_note", ""), "coriolis_note", allow_empty=True)
    if coriolis != "full" and not note:
        raise v.fail("coriolis_note", f"coriolis_added_mass is {coriolis!r}: the file must say why (coriolis_note)")

    thrusters = _thrusters(v, data.get("thrusters", []), data.get("thruster_defaults", {}))
    _rotors_match_domain(v, thrusters, domain)
    fins = _fins(v, data.get("fins", []))
    sensors = v.mapping(data.get("sensors"), "sensors")
    sources = _sources(v, data)

    spec = VehicleSpec(
        name=name,
        domain=domain,
        description=description,
        mass_kg=mass,
        inertia_cg_kgm2=inertia,
        cg_frd_m=cg,
        added_mass=added_mass,
        damping_linear=d_lin,
        damping_quadratic=d_quad,
        volume_m3=volume,
        cb_frd_m=cb,
        surface=surface,
        hull_height_m=hull_height,
        body_lift=body_lift,
        coriolis_added_mass=coriolis,
        coriolis_note=note,
        thrusters=thrusters,
        fins=fins,
        wind=wind,
        aerial=aerial,
        deck=deck,
        hull_box=hull_box,
        water_density_kgm3=rho,
        sensors=copy.deepcopy(sensors),
        sources=sources,
    )
    v.positive_definite(rigid_body_mass_matrix(spec) + added_mass, "added_mass", "M = M_RB + M_A")
    _freeze_arrays(spec)
    return spec


def _freeze_arrays(spec: VehicleSpec) -> None:
    """Make every array of a spec read-only: specs are shared (cache, many vessels of one model)."""
    items: list[Any] = [spec, *spec.thrusters, *spec.fins]
    for item in items:
        for f in fields(item):
            value = getattr(item, f.name)
            if isinstance(value, np.ndarray):
                value.setflags(write=False)


def _surface(v: _Validator, raw: Any) -> SurfaceHydrostatics:
    v.mapping(raw, "surface", SURFACE_OPTIONAL, required=SURFACE_REQUIRED, none_ok=False)
    vals = {k: v.positive(raw[k], f"surface.{k}") for k in SURFACE_REQUIRED}
    points = None
    if raw.get("wave_points_frd") is not None:
        key = "surface.wave_points_frd"
        rows = v.list_of(raw["wave_points_frd"], key, lambda item, k: v.vector(item, k, 2))
        if len(rows) < 3 or np.linalg.matrix_rank(np.array(rows) - np.mean(rows, axis=0)) < 2:
            raise v.fail(key, f"expected at least 3 points [x, y] not on one line, got {rows}")
        points = np.array(rows)
    return SurfaceHydrostatics(**vals, wave_points_frd=points)


def _hull(v: _Validator, data: Mapping[str, Any], domain: str) -> tuple[float, BodyLiftSpec | None]:
    """hull_height_m (vertical extent for the surface crossing) and body_lift: underwater vehicles only (surface
    vessels have waterplane hydrostatics and no slender-body hull lift model)."""
    for key in ("hull_height_m", "body_lift"):
        if key in data and domain != "underwater":
            raise v.fail(key, f"only underwater vehicles take {key}, found domain {domain!r}")
    height = v.positive(data["hull_height_m"], "hull_height_m") if "hull_height_m" in data else 0.0
    if "body_lift" not in data:
        return height, None
    raw = data["body_lift"]
    v.mapping(raw, "body_lift", (), required=BODY_LIFT_REQUIRED, none_ok=False)
    lift = BodyLiftSpec(
        diameter_m=v.positive(raw["diameter_m"], "body_lift.diameter_m"),
        lift_coefficient_per_rad=v.positive(raw["lift_coefficient_per_rad"], "body_lift.lift_coefficient_per_rad"),
        centre_of_pressure_x_m=v.number(raw["centre_of_pressure_x_m"], "body_lift.centre_of_pressure_x_m"),
    )
    return height, lift


def _aerial(v: _Validator, data: Mapping[str, Any], domain: str) -> AerialSpec | None:
    """The `aerial` mapping (contact height, air density): required for, and only taken by, aerial vehicles, which
    take none of the water's keys (NOT_AERIAL)."""
    if domain != "aerial":
        if "aerial" in data:
            raise v.fail("aerial", f"only aerial vehicles take an aerial mapping, found domain {domain!r}")
        return None
    if data.get("fins"):
        raise v.fail("fins", "an aerial vehicle steers with its rotors: fins (lift in water) are not taken")
    for key in NOT_AERIAL:
        if key in data:
            raise v.fail(key, "an aerial vehicle flies: it takes no water keys (volume_m3, cb_frd_m, surface, wind)")
    if "aerial" not in data:
        raise v.fail("aerial", "missing: an aerial vehicle needs its contact_height_m (landing gear below CO)")
    raw = data["aerial"]
    v.mapping(raw, "aerial", AERIAL_OPTIONAL, required=AERIAL_REQUIRED, none_ok=False)
    return AerialSpec(
        contact_height_m=v.nonnegative(raw["contact_height_m"], "aerial.contact_height_m"),
        air_density_kgm3=v.positive(raw.get("air_density_kgm3", 1.225), "aerial.air_density_kgm3"),
    )


def _deck(v: _Validator, data: Mapping[str, Any], domain: str) -> DeckSpec | None:
    """A surface vessel's landing deck (optional): height above CO, length, beam (> 0), centre (FRD, default 0)."""
    if "deck" not in data:
        return None
    if domain != "surface":
        raise v.fail("deck", f"only surface vessels take a deck, found domain {domain!r}")
    raw = data["deck"]
    v.mapping(raw, "deck", DECK_OPTIONAL, required=DECK_REQUIRED, none_ok=False)
    return DeckSpec(
        **{k: v.positive(raw[k], f"deck.{k}") for k in DECK_REQUIRED},
        **{k: v.number(raw.get(k, 0.0), f"deck.{k}") for k in DECK_OPTIONAL},
    )


def _hull_box(v: _Validator, data: Mapping[str, Any]) -> HullBoxSpec | None:
    """The hull as a box for collisions (optional): length, beam, height (> 0) and its centre (FRD from CO, default
    0); without it lotusim_core.base.hull_box derives one from the other keys."""
    if "hull_box" not in data:
        return None
    raw = data["hull_box"]
    v.mapping(raw, "hull_box", HULL_BOX_OPTIONAL, required=HULL_BOX_REQUIRED, none_ok=False)
    return HullBoxSpec(
        **{k: v.positive(raw[k], f"hull_box.{k}") for k in HULL_BOX_REQUIRED},
        centre_frd_m=v.array(raw.get("centre_frd_m", [0.0, 0.0, 0.0]), "hull_box.centre_frd_m", 3),
    )


def _rotors_match_domain(v: _Validator, thrusters: tuple[ThrusterSpec, ...], domain: str) -> None:
    """Rotors (k_f w^2 in air) drive aerial vehicles, and aerial vehicles are driven by rotors only."""
    for i, t in enumerate(thrusters):
        if (t.model == "rotor") != (domain == "aerial"):
            reason = (
                f"an aerial vehicle's thrusters are rotors (model: rotor), found {t.model!r}"
                if domain == "aerial"
                else f"rotor thrusters (k_f w^2 in air) drive aerial vehicles only, found domain {domain!r}"
            )
            raise v.fail(f"thrusters[{i}].model", reason)


def _wind(v: _Validator, raw: Any) -> WindSpec:
    v.mapping(raw, "wind", WIND_OPTIONAL, required=WIND_REQUIRED, none_ok=False)
    vals = {k: v.positive(raw[k], f"wind.{k}") for k in ("frontal_area_m2", "lateral_area_m2", "length_m")}
    vals.update({k: v.number(raw[k], f"wind.{k}") for k in ("cx", "cy", "cn")})
    vals["air_density_kgm3"] = v.positive(raw.get("air_density_kgm3", 1.225), "wind.air_density_kgm3")
    return WindSpec(**vals)


def _thrusters(v: _Validator, raw: Any, defaults: Any) -> tuple[ThrusterSpec, ...]:
    v.mapping(defaults, "thruster_defaults", THRUSTER_REQUIRED + THRUSTER_OPTIONAL, none_ok=False)
    items = v.sequence(raw, "thrusters")
    out = []
    for i, item in enumerate(items):
        key = f"thrusters[{i}]"
        v.mapping(item, key, none_ok=False)
        try:
            out.append(_thruster(v, {**defaults, **item}, key))
        except CatalogueError as exc:
            sub = exc.key[len(key) + 1 :].split(".")[0]
            if sub in defaults and sub not in item:
                raise CatalogueError(exc.where, exc.key, f"{exc.reason} (value from thruster_defaults)") from None
            raise
    v.unique_names(out, "thrusters")
    return tuple(out)


def _thruster(v: _Validator, t: dict[str, Any], key: str) -> ThrusterSpec:
    v.mapping(t, key, THRUSTER_OPTIONAL, required=THRUSTER_REQUIRED, none_ok=False)
    model = v.choice(t["model"], f"{key}.model", THRUST_MODELS)
    units = ROTOR_UNITS if model in ("quadratic", "rotor") else CURVE_UNITS
    if model != "rotor":
        for k in ROTOR_REQUIRED + ROTOR_OPTIONAL:
            if k in t:
                raise v.fail(f"{key}.{k}", f"only rotor thrusters (model: rotor) take {k}, found model {model!r}")
    unit = v.choice(t["command_unit"], f"{key}.command_unit", units)
    cmin, cmax = v.number(t["command_min"], f"{key}.command_min"), v.number(t["command_max"], f"{key}.command_max")
    if not cmin < cmax:
        raise CatalogueError(
            v.where, f"{key}.command_max", f"expected command_min < command_max, found {cmin} >= {cmax}"
        )
    if unit == "normalized" and (cmin < -1.0 or cmax > 1.0):
        raise CatalogueError(
            v.where, f"{key}.command_min", f"normalized commands lie in [-1, 1], found [{cmin}, {cmax}]"
        )
    spec_kw: dict[str, Any] = {
        "name": v.stripped(t["name"], f"{key}.name"),
        "position_frd_m": v.array(t["position_frd_m"], f"{key}.position_frd_m", 3),
        "direction_frd": v.unit_vector(t["direction_frd"], f"{key}.direction_frd"),
        "model": model,
        "command_unit": unit,
        "command_min": cmin,
        "command_max": cmax,
        "time_constant_s": v.positive(t["time_constant_s"], f"{key}.time_constant_s"),
        "kq": v.number(t.get("kq", 0.0), f"{key}.kq"),
    }
    if model == "rotor":
        spec_kw.update(_rotor(v, t, key, cmin))
    elif model == "quadratic":
        spec_kw["diameter_m"] = v.positive(t.get("diameter_m"), f"{key}.diameter_m")
        spec_kw["kt"] = v.positive(t.get("kt"), f"{key}.kt")
        if t.get("kt_reverse") is not None:
            spec_kw["kt_reverse"] = v.positive(t["kt_reverse"], f"{key}.kt_reverse")
        if "curve" in t and t["curve"]:
            raise v.fail(f"{key}.curve", "a quadratic thruster takes kt/diameter_m, not a curve")
    else:
        spec_kw["curve"] = _curve(v, t.get("curve"), f"{key}.curve")
        if "diameter_m" in t:
            spec_kw["diameter_m"] = v.positive(t["diameter_m"], f"{key}.diameter_m")
    return ThrusterSpec(**spec_kw)


def _rotor(v: _Validator, t: Mapping[str, Any], key: str, command_min: float) -> dict[str, Any]:
    """The keys of a multirotor motor (`model: rotor`, lotusim_physics.rotors)."""
    for k in ROTOR_REQUIRED:
        if k not in t:
            raise v.fail(f"{key}.{k}", f"missing: a rotor needs {', '.join(ROTOR_REQUIRED)}")
    for k in ("curve", "kt", "kt_reverse", "diameter_m"):
        if t.get(k):
            raise v.fail(f"{key}.{k}", "a rotor takes motor_constant (T = k_f w^2), not a propeller or curve model")
    if command_min < 0.0:
        raise v.fail(f"{key}.command_min", f"a rotor's motor speed command is >= 0, found {command_min}")
    return {
        "motor_constant": v.positive(t["motor_constant"], f"{key}.motor_constant"),
        "moment_constant_m": v.nonnegative(t["moment_constant_m"], f"{key}.moment_constant_m"),
        "spin": v.choice(t["spin"], f"{key}.spin", SPINS),
        "time_constant_down_s": v.positive(t["time_constant_down_s"], f"{key}.time_constant_down_s"),
        "rotor_drag_coefficient": v.nonnegative(t.get("rotor_drag_coefficient", 0.0), f"{key}.rotor_drag_coefficient"),
        "rolling_moment_coefficient": v.nonnegative(
            t.get("rolling_moment_coefficient", 0.0), f"{key}.rolling_moment_coefficient"
        ),
    }


def _curve(v: _Validator, raw: Any, key: str) -> dict[str, float]:
    """Parameters of the generalised logistic thrust curve ([SaldarriagaMesa2025] Eq. 16)."""
    if raw is None:
        raise v.fail(key, "missing: curve models (t200, glf) need their parameters")
    v.mapping(raw, key, (), required=CURVE_KEYS, none_ok=False)
    curve = {k: v.number(raw[k], f"{key}.{k}") for k in CURVE_KEYS}
    for k in ("nu_pos", "nu_neg", "b_pos", "b_neg"):
        if curve[k] <= 0.0:
            raise v.fail(f"{key}.{k}", f"expected > 0 (curve shape), found {curve[k]}")
    if not curve["max_force_rev_n"] < 0.0 < curve["max_force_fwd_n"]:
        raise v.fail(
            f"{key}.max_force_fwd_n",
            f"expected max_force_rev_n < 0 < max_force_fwd_n, found {curve['max_force_rev_n']}, "
            f"{curve['max_force_fwd_n']}",
        )
    if not 0.0 <= curve["deadband"] < 1.0:
        raise v.fail(f"{key}.deadband", f"expected 0 <= deadband < 1, found {curve['deadband']}")
    return curve


def _fins(v: _Validator, raw: Any) -> tuple[FinSpec, ...]:
    out = v.list_of(raw, "fins", lambda item, key: _fin(v, item, key))
    v.unique_names(out, "fins")
    return tuple(out)


def _fin(v: _Validator, item: Any, key: str) -> FinSpec:
    """One control fin (`fins[i]`): geometry, lift and stall (rad), servo dynamics."""
    v.mapping(item, key, (), required=FIN_REQUIRED, none_ok=False)
    kw: dict[str, Any] = {
        "name": v.stripped(item["name"], f"{key}.name"),
        "position_frd_m": v.array(item["position_frd_m"], f"{key}.position_frd_m", 3),
        "roll_angle_rad": v.number(item["roll_angle_rad"], f"{key}.roll_angle_rad"),
        "post_stall_slope_per_rad": v.number(item["post_stall_slope_per_rad"], f"{key}.post_stall_slope_per_rad"),
        "cd0": v.nonnegative(item["cd0"], f"{key}.cd0"),
        "induced_drag_factor": v.nonnegative(item["induced_drag_factor"], f"{key}.induced_drag_factor"),
    }
    for k in ("area_m2", "lift_slope_per_rad", "max_angle_rad", "time_constant_s", "rate_limit_rad_s"):
        kw[k] = v.positive(item[k], f"{key}.{k}")
    kw["stall_angle_rad"] = v.positive(item["stall_angle_rad"], f"{key}.stall_angle_rad")
    for k in ("stall_angle_rad", "max_angle_rad"):
        if kw[k] >= math.pi / 2:
            raise v.fail(f"{key}.{k}", f"expected an angle below pi/2 rad, found {kw[k]}")
    _fin_placement(v, kw["position_frd_m"], kw["roll_angle_rad"], key)
    return FinSpec(**kw)


def _fin_placement(v: _Validator, pos: np.ndarray, roll: float, key: str) -> None:
    """An off-axis fin must sit at its roll angle: (y, z) = r (sin phi, -cos phi) (phi = 0 top, pi/2 starboard)."""
    r = float(np.hypot(pos[1], pos[2]))
    if r <= ROLL_POSITION_TOL:
        return
    expected = r * np.array([math.sin(roll), -math.cos(roll)])
    if np.linalg.norm(pos[1:] - expected) > ROLL_POSITION_TOL:
        raise v.fail(
            f"{key}.position_frd_m",
            f"a fin at roll angle {roll:.4f} rad and radius {r:.4f} m sits at (y, z) = "
            f"({expected[0]:.4f}, {expected[1]:.4f}), found ({pos[1]:.4f}, {pos[2]:.4f})",
        )


def _sources(v: _Validator, data: Mapping[str, Any]) -> dict[str, str]:
    raw = data["sources"]
    if not isinstance(raw, dict) or not raw:
        raise v.fail("sources", "expected a non-empty mapping key -> citation")
    sources = v.mapping_of(raw, "sources", v.stripped)
    for k in CITED_KEYS:
        present = k in data and not (k in ("thrusters", "fins") and not data[k])
        if present and k not in sources:
            raise v.fail(f"sources.{k}", f"missing: every number needs its source and `{k}` has none")
    return sources


# --------------------------------------------------------------------------------------------- validation


class _Validator(Validator):
    """The shared checks (lotusim_core.base.validation) raising CatalogueError, plus the vehicle's own: arrays,
    matrices and their physical properties."""

    def __init__(self, where: str) -> None:
        super().__init__(where, CatalogueError)

    def stripped(self, raw: Any, key: str, allow_empty: bool = False) -> str:
        """A string (non-blank unless allow_empty), surrounding spaces removed."""
        return self.text(raw, key, allow_empty=allow_empty).strip()

    def nonnegative(self, raw: Any, key: str) -> float:
        return self.number(raw, key, low=0.0)

    def array(self, raw: Any, key: str, n: int) -> np.ndarray:
        """n finite numbers as a float array."""
        return np.array(self.vector(raw, key, n))

    def unit_vector(self, raw: Any, key: str) -> np.ndarray:
        vec = self.array(raw, key, 3)
        norm = float(np.linalg.norm(vec))
        if abs(norm - 1.0) > UNIT_TOL:
            raise self.fail(key, f"expected a unit vector, found norm {norm:.6f}")
        return vec / norm

    def matrix(self, raw: Any, key: str, n: int) -> np.ndarray:
        """n numbers (the diagonal) or an n x n nested list; anything else is malformed."""
        if isinstance(raw, (list, tuple)) and len(raw) == n and all(not isinstance(x, (list, tuple)) for x in raw):
            return np.diag(self.array(raw, key, n))
        if isinstance(raw, (list, tuple)) and len(raw) == n and all(isinstance(r, (list, tuple)) for r in raw):
            rows = [self.array(r, f"{key}[{i}]", n) for i, r in enumerate(raw)]
            return np.array(rows)
        shape = _shape(raw)
        raise self.fail(key, f"expected {n} numbers (diagonal) or a {n}x{n} nested list, found {shape}")

    def symmetric(self, mat: np.ndarray, key: str, what: str = "") -> None:
        scale = max(float(np.abs(mat).max()), 1e-12)
        asym = float(np.abs(mat - mat.T).max())
        if asym > SYMMETRY_TOL * scale:
            i, j = np.unravel_index(int(np.argmax(np.abs(mat - mat.T))), mat.shape)
            raise self.fail(
                key,
                f"{what or 'matrix'} must be symmetric, found [{i},{j}] = {mat[i, j]:.6g} "
                f"vs [{j},{i}] = {mat[j, i]:.6g}",
            )

    def positive_definite(self, mat: np.ndarray, key: str, what: str) -> None:
        self.symmetric(mat, key, what)
        lam = float(np.linalg.eigvalsh(0.5 * (mat + mat.T)).min())
        if lam <= 0.0:
            raise self.fail(key, f"{what} must be positive definite, found smallest eigenvalue {lam:.6g}")

    def inertia(self, inertia: np.ndarray, key: str) -> None:
        """Symmetric positive definite, principal moments obeying I_1 + I_2 >= I_3 (a real mass distribution)."""
        self.positive_definite(inertia, key, "the inertia tensor")
        i1, i2, i3 = np.sort(np.linalg.eigvalsh(inertia))
        if i1 + i2 < i3 * (1.0 - 1e-9):
            raise self.fail(
                key,
                f"not physically realisable: principal moments {i1:.6g}, {i2:.6g}, {i3:.6g} violate I_1 + I_2 >= I_3",
            )

    def nonnegative_diagonal(self, mat: np.ndarray, key: str) -> None:
        diag = np.diag(mat)
        if (diag < 0.0).any():
            i = int(np.argmin(diag))
            raise self.fail(
                key,
                f"diagonal [{i},{i}] = {diag[i]:.6g} < 0 would feed energy in (magnitudes are positive by convention)",
            )

    def unique_names(self, items: list[Any], key: str) -> None:
        seen: set[str] = set()
        for i, item in enumerate(items):
            if item.name in seen:
                raise self.fail(f"{key}[{i}].name", f"duplicate name {item.name!r}")
            seen.add(item.name)


# ------------------------------------------------------------------------------------------------ helpers


def _resolve(name_or_path: str | Path) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.parent != Path("."):
        if not candidate.is_file():
            raise UnknownModelError(str(candidate), "<file>", "vehicle file not found")
        return candidate.resolve()
    return _model_path(str(name_or_path))


@functools.lru_cache(maxsize=256)
def _model_path(name: str) -> Path:
    """config/vehicles/<name>.yaml, looked up once per model name and process (a spawn of 1,000 vessels asks
    1,000 times; the configuration directory does not change while a process runs)."""
    path = vehicles_dir() / f"{name}.yaml"
    if not path.is_file():
        raise UnknownModelError(str(vehicles_dir()), name, f"unknown vehicle model (known: {', '.join(list_models())})")
    return path


def _merge(base: dict[str, Any], over: Mapping[str, Any], where: str, prefix: str) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        path = f"{prefix}{key}"
        if key in ("thrusters", "fins") and not prefix and isinstance(value, Mapping):
            out[key] = _merge_named(out.get(key, []), value, where, key, base.get("thruster_defaults", {}))
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value, where, f"{path}.")
        else:
            out[key] = copy.deepcopy(value)
    return out


def _merge_named(items: Any, over: Mapping[str, Any], where: str, key: str, defaults: Any) -> list[Any]:
    items = [dict(x) for x in (items or [])]
    names = [x.get("name") for x in items]
    for name, patch in over.items():
        if name not in names:
            raise CatalogueError(where, f"{key}.{name}", f"no such entry (known: {', '.join(map(str, names))})")
        if not isinstance(patch, Mapping):
            raise CatalogueError(where, f"{key}.{name}", f"expected a mapping of keys to change, found {patch!r}")
        i = names.index(name)
        items[i] = _merge(items[i], patch, where, f"{key}.{name}.")
    return items


def _dataclass_dict(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def _plain(value: Any) -> Any:
    """numpy arrays -> nested lists, dicts/tuples recursively, for YAML round trips."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _shape(raw: Any) -> str:
    if not isinstance(raw, (list, tuple)):
        return type(raw).__name__
    inner = {len(r) if isinstance(r, (list, tuple)) else "scalar" for r in raw}
    return f"a list of {len(raw)} with rows of {sorted(map(str, inner))}"
