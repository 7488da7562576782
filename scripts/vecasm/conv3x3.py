# The 3x3 convolution shared by convpool.py and convback.py: a window's
# four values of z from the padded image's values broadcast from memory.

# ROWS hold the window's four padded rows, WEIGHTS the nine kernel
# vectors (tap 3*kh+kw) of 16 channels.
ROWS = ["AX", "R10", "R11", "R12"]
WEIGHTS = ["Z%d" % i for i in range(9)]


def conv(wins):
    """The lines that set each window's z: wins lists (column offset in
    bytes, [x00, x01, x10, x11] registers). Each value's nine products
    come in conv1512's order (the first a product, then fused
    multiply-adds, tap by tap); the chains of all values are interleaved
    so that their latencies overlap."""
    chains = []
    for off, acc in wins:
        for idx, a in enumerate(acc):
            dy, dx = idx // 2, idx % 2
            chains.append([("%d(%s)" % (off + 4 * (dx + kw), ROWS[dy + kh]), WEIGHTS[3 * kh + kw], a)
                           for kh in range(3) for kw in range(3)])
    out = []
    for step in range(9):
        for ops in chains:
            mem, w, a = ops[step]
            op = "VMULPS.BCST" if step == 0 else "VFMADD231PS.BCST"
            out.append("\t%s %s, %s, %s" % (op, mem, w, a))
    return out
