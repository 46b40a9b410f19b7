"""Running the matrix: plan, shards, resume, lock; each trial through its provider and
its cassette (:mod:`toolbench.cassettes`, the layer below)."""
