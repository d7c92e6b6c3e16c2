"""Settings read by libraries the core loads, made before it loads them."""

import os

# UCX, the transport of the MPI library the core links, reads this when it is loaded: it would
# otherwise warn, at the end of a distributed run, about the windows of tensors still alive then,
# whose memory goes with the process.
os.environ.setdefault("UCX_LOG_LEVEL", "error")
