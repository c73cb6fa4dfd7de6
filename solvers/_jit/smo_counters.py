"""The integer state ``ist`` of SMO's jitted loops (:mod:`solvers._jit.smo`): its positions."""

# Integer state ``ist``: positions.
N_ACTIVE = 0  # size of the active set (its indices are active[:n_active])
CLOCK = 1  # LRU clock
HITS = 2  # cache hits
MISSES = 3  # cache misses (columns, or the general form's kernel rows, computed)
SHRINK_COUNTER = 4  # updates left before the next shrinking
UNSHRUNK = 5  # 1 once the active set was grown back at 10·eps in this phase
RECONSTRUCTIONS = 6  # gradient reconstructions done
PENDING_SHRINK = 7  # 1: a shrinking waits for the reconstruction its loop returned for
N_IST = 8
