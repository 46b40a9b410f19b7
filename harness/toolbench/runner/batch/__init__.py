"""``run --batch``: single-turn trials answered through the providers' batch APIs before
the run, their cassettes written as if recorded live (:mod:`.phase`)."""
