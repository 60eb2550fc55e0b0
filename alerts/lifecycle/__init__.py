"""An alert's life: evaluating a series after a run, opening, resolving and acting on alerts."""
