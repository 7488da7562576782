"""PyTorch yardstick for trmaml's sine benchmark (graph.BenchmarkSineSecondOrder).

One MAML meta-iteration of the sinusoid regression setting, written for this project: MLP
1-40-40-1 with ReLU, T = 25 tasks, K = J = 5 points each, float64 like the Go benchmark.
Per task t the fast weights are theta_t = w - alpha * grad L_support,t(w) (one inner SGD
step, alpha 1e-3, differentiated through with create_graph unless --first-order); the
meta-loss is sum_t L_query,t(theta_t) / T with L the mean squared error over the task's
points; its gradient with respect to w is followed by an Adam step (the Go benchmark
stops at the gradient: Adam on 1,761 parameters is a few microseconds).

The tasks run batched: --mode bmm (default) copies w along a task axis and runs every layer
as one torch.bmm, so the inner gradient of the summed support losses with respect to the
copies is every task's own gradient; --mode loop runs the tasks one after the other (ten times slower;
functorch's vmap took 1.3-2 times bmm's time in a trial with torch 1.13). Both give the same
meta-gradient (--check compares them with each other and with a finite difference).

Usage:
  OPENBLAS_NUM_THREADS=1 python3 scripts/bench_sine.py [--iters 2000] [--mode bmm|loop]
Prints one line: mode, order, median and minimum wall time and mean CPU time (of the process)
per meta-iteration, in ms.
"""
import argparse
import statistics
import time

import torch

SIZES = (1, 40, 40, 1)


def init(gen):
    """[W1 (1, 40), b1, W2 (40, 40), b2, W3 (40, 1), b3], small random values."""
    ps = []
    for a, b in zip(SIZES, SIZES[1:]):
        ps += [0.1 * torch.randn(a, b, generator=gen, dtype=torch.float64),
               0.1 * torch.randn(b, generator=gen, dtype=torch.float64)]
    return [p.requires_grad_() for p in ps]


def forward_bmm(ps, x):
    """x (T, N, 1), ps with a leading task axis -> predictions (T, N, 1)."""
    h = x
    for i in range(0, len(ps), 2):
        h = torch.baddbmm(ps[i + 1].unsqueeze(1), h, ps[i])
        if i + 2 < len(ps):
            h = torch.relu(h)
    return h


def per_task_mse(pred, y):
    return ((pred - y) ** 2).mean(dim=(1, 2))


def meta_loss_bmm(w, batch, alpha, first_order):
    sx, sy, qx, qy = batch
    tasks = sx.shape[0]
    theta = [p.unsqueeze(0).expand(tasks, *p.shape) for p in w]
    inner = per_task_mse(forward_bmm(theta, sx), sy).sum()
    g = torch.autograd.grad(inner, theta, create_graph=not first_order)
    fast = [t - alpha * d for t, d in zip(theta, g)]
    return per_task_mse(forward_bmm(fast, qx), qy).mean()


def forward_one(ps, x):
    h = x
    for i in range(0, len(ps), 2):
        h = torch.addmm(ps[i + 1], h, ps[i])
        if i + 2 < len(ps):
            h = torch.relu(h)
    return h


def meta_loss_loop(w, batch, alpha, first_order):
    """The same meta-loss task by task, for --check and as a slower alternative."""
    losses = []
    for x_s, y_s, x_q, y_q in zip(*batch):
        g = torch.autograd.grad(((forward_one(w, x_s) - y_s) ** 2).mean(), w, create_graph=not first_order)
        fast = [p - alpha * d for p, d in zip(w, g)]
        losses.append(((forward_one(fast, x_q) - y_q) ** 2).mean())
    return torch.stack(losses).mean()


def random_batch(tasks, k, j, gen):
    """Sinusoids A sin(x - phase), A in [0.1, 5], phase in [0, pi], x in [-5, 5]."""
    amp = 0.1 + 4.9 * torch.rand(tasks, 1, 1, generator=gen, dtype=torch.float64)
    phase = torch.pi * torch.rand(tasks, 1, 1, generator=gen, dtype=torch.float64)
    xs = [10 * torch.rand(tasks, n, 1, generator=gen, dtype=torch.float64) - 5 for n in (k, j)]
    return xs[0], amp * torch.sin(xs[0] - phase), xs[1], amp * torch.sin(xs[1] - phase)


def check(args):
    """Both modes' meta-gradients against a central difference of the meta-loss."""
    gen = torch.Generator().manual_seed(1)
    w, batch = init(gen), random_batch(args.tasks, 5, 5, gen)
    grads = {}
    for name, fn in (("bmm", meta_loss_bmm), ("loop", meta_loss_loop)):
        grads[name] = torch.autograd.grad(fn(w, batch, args.alpha, False), w)
    p, i, h = 2, 7, 1e-6
    flat = w[p].data.view(-1)
    flat[i] += h
    up = meta_loss_bmm(w, batch, args.alpha, False).item()
    flat[i] -= 2 * h
    down = meta_loss_bmm(w, batch, args.alpha, False).item()
    flat[i] += h
    fd = (up - down) / (2 * h)
    for name, g in grads.items():
        print(f"{name}: d/dW2[{i}] {g[p].view(-1)[i].item():.12g}, finite difference {fd:.12g}")
    diff = max((a - b).abs().max().item() for a, b in zip(grads["bmm"], grads["loop"]))
    print(f"bmm vs loop: max abs difference {diff:.3g}")


def bench(args):
    gen = torch.Generator().manual_seed(1)
    w, batch = init(gen), random_batch(args.tasks, 5, 5, gen)
    opt = torch.optim.Adam(w, lr=1e-3)
    fn = meta_loss_bmm if args.mode == "bmm" else meta_loss_loop

    def step():
        opt.zero_grad(set_to_none=True)
        fn(w, batch, args.alpha, args.first_order).backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    wall, cpu = [], []
    for _ in range(args.iters):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    order = "first" if args.first_order else "second"
    print(f"pytorch {torch.__version__} sine {args.mode} {order} order T={args.tasks}: "
          f"median {1e3 * statistics.median(wall):.3f} ms, min {1e3 * min(wall):.3f} ms, "
          f"cpu {1e3 * statistics.mean(cpu):.3f} ms per meta-iteration "
          f"({args.iters} iterations, {torch.get_num_threads()} thread)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=25)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--mode", choices=("bmm", "loop"), default="bmm")
    ap.add_argument("--first-order", action="store_true")
    ap.add_argument("--check", action="store_true", help="meta-gradients against a finite difference")
    args = ap.parse_args()
    torch.set_num_threads(1)
    check(args) if args.check else bench(args)


if __name__ == "__main__":
    main()
