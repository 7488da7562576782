"""Runs the PyTorch yardstick (maml_conv4_bench.py) and adds its CPU time.

    python3 scripts/torch_cpu.py YARDSTICK.py [YARDSTICK FLAGS]

The yardstick times each meta-iteration with time.perf_counter (wall
clock), which on a shared machine measures the neighbours as much as the
work. This runs it unchanged but for that clock: each call of
time.perf_counter also records the process's CPU time (all threads, as
cnnbench's "CPU" figure), and at the end a line on standard error gives the
median CPU seconds of the timed iterations. The yardstick reads the clock
once before every iteration and once more after each timed one (the
warm-up iterations are not), so the last 2 x --iters readings are the timed
iterations' start and end.
"""
import runpy
import statistics
import sys
import time

wall = time.perf_counter
cpu = []


def perf_counter():
    cpu.append(time.process_time())
    return wall()


time.perf_counter = perf_counter
path = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(path, run_name="__main__")
iters = next((int(a.split("=", 1)[1]) if "=" in a else int(sys.argv[i + 1])
              for i, a in enumerate(sys.argv) if a.split("=", 1)[0] == "--iters"), 20)
timed = cpu[len(cpu) - 2 * iters:]
if iters < 1 or len(timed) != 2 * iters:
    sys.exit(f"torch_cpu.py: {len(cpu)} clock readings for --iters {iters}: not the yardstick's timing loop")
per = [end - start for start, end in zip(timed[0::2], timed[1::2])]
print(f"cpu median {statistics.median(per):.3f} s per iteration", file=sys.stderr)
