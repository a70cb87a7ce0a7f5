"""Communication between ranks: MPI plumbing (mpi.py: buffer collectives, collective errors,
abort). Bulk data moves with mpi4py's buffer (upper-case) methods only."""
