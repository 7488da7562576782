# Regenerates the Pillow goldens of resample_test.go (run with Debian's
# python3-pil: /usr/bin/python3 gen.py). Inputs are 1-bit 105x105 PNGs like
# Omniglot's, drawn with random strokes of width 1 to 4; outputs are what
# Pillow's Image.resize makes of them: LANCZOS on the grayscale image
# (convert("L")) and any filter on the 1-bit image (Pillow uses NEAREST).
import random
from PIL import Image, ImageDraw

random.seed(1)
for i in range(3):
    im = Image.new("1", (105, 105), 1)
    d = ImageDraw.Draw(im)
    for _ in range(4 + 2 * i):
        pts = [(random.randrange(105), random.randrange(105)) for _ in range(3)]
        d.line(pts, fill=0, width=random.randint(1, 4))
    d.point([(random.randrange(105), random.randrange(105)) for _ in range(5)], fill=0)
    im.save(f"in{i}.png")
    for size in (28, 14):
        im.convert("L").resize((size, size), Image.LANCZOS).save(f"in{i}_lanczos{size}.png")
        im.resize((size, size), Image.LANCZOS).convert("L").save(f"in{i}_nearest{size}.png")
