"""`lotusim bench` targets: `dynamics` (the batched fleet in process) and `fleet` (the nodes over DDS).

Top layer, beside the CLI; the scripts under the repository's bench/ are the other benchmarks."""
