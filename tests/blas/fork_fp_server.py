"""Imported by the forkserver as it starts (fork_fp_test.py): a GEMM there
opens the drop-in's thread team in the process every worker is forked from."""
import numpy as np

_ = np.ones((256, 256), np.float32) @ np.ones((256, 256), np.float32)
