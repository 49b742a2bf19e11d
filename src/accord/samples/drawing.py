"""Pictures from words for the image sample: the same prompt gives the same PNG bytes.

Colour words colour the shapes named after them ("three red circles"), scene words set
the background ("night", "sea", "sunset"); anything else is chosen from a hash of the prompt.
The prompt is written along the bottom. The random choices are seeded with a hash of the
prompt, so the same prompt gives the same bytes (with the same Pillow).
"""

from __future__ import annotations

import hashlib
import io
import math
import random
import re
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 512, 512
MAX_PROMPT = 300
Colour = tuple[int, int, int]

COLOURS: dict[str, Colour] = {
    "red": (220, 50, 47), "orange": (245, 140, 30), "yellow": (250, 210, 40),
    "green": (60, 170, 80), "blue": (40, 110, 220), "purple": (130, 70, 180),
    "pink": (240, 120, 170), "white": (250, 250, 250), "black": (20, 20, 20),
    "grey": (128, 128, 128), "gray": (128, 128, 128), "brown": (130, 85, 45),
    "gold": (212, 175, 55), "teal": (0, 128, 128),
}  # fmt: skip
SCENES: dict[str, tuple[Colour, Colour]] = {
    "night": ((10, 15, 45), (40, 40, 90)), "sky": ((120, 180, 240), (220, 235, 250)),
    "sea": ((20, 60, 130), (60, 140, 200)), "ocean": ((20, 60, 130), (60, 140, 200)),
    "sunset": ((250, 120, 60), (120, 40, 110)), "forest": ((20, 80, 40), (90, 150, 80)),
    "desert": ((240, 200, 130), (200, 140, 80)), "snow": ((235, 240, 250), (200, 210, 225)),
}  # fmt: skip
SHAPES = {
    "circle": "circle", "circles": "circle", "ball": "circle", "balls": "circle",
    "sun": "circle", "moon": "circle", "square": "square", "squares": "square",
    "box": "square", "boxes": "square", "triangle": "triangle", "triangles": "triangle",
    "mountain": "triangle", "mountains": "triangle", "star": "star", "stars": "star",
}  # fmt: skip
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "many": 12, "some": 4, "several": 5,
}  # fmt: skip
MAX_SHAPES = 40


def normalized(prompt: str) -> str:
    """The prompt as drawn: lower case, single spaces."""
    return " ".join(prompt.lower().split())


@lru_cache(maxsize=32)
def draw(prompt: str) -> bytes:
    """The PNG for `prompt` (WIDTH x HEIGHT pixels)."""
    text = normalized(prompt)
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    words = re.findall(r"[a-z]+|\d+", text)
    image = Image.new("RGB", (WIDTH, HEIGHT))
    canvas = ImageDraw.Draw(image)
    _background(canvas, words, rng)
    for shape, colour in _shapes(words, rng):
        _shape(canvas, shape, colour, rng)
    _caption(canvas, prompt.strip())
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _background(canvas: ImageDraw.ImageDraw, words: list[str], rng: random.Random) -> None:
    scene = next((SCENES[w] for w in words if w in SCENES), None)
    top, bottom = scene or (_random_colour(rng, 150), _random_colour(rng, 200))
    for y in range(HEIGHT):
        mix = y / (HEIGHT - 1)
        row = tuple(round(a + (b - a) * mix) for a, b in zip(top, bottom, strict=True))
        canvas.line([(0, y), (WIDTH, y)], fill=row)


def _shapes(words: list[str], rng: random.Random) -> list[tuple[str, Colour]]:
    """The shapes the words ask for (count and colour from the words before each), or some."""
    shapes: list[tuple[str, Colour]] = []
    count, colour = 1, None
    for word in words:
        if word.isdigit():  # a long or non-ASCII number of digits asks for the most there are
            count = min(int(word), MAX_SHAPES) if word.isascii() and len(word) < 6 else MAX_SHAPES
        elif word in NUMBERS:
            count = NUMBERS[word]
        elif word in COLOURS:
            colour = COLOURS[word]
        elif word in SHAPES:
            shapes += [(SHAPES[word], colour or _random_colour(rng, 40)) for _ in range(count)]
            count, colour = 1, None
    if not shapes:
        kinds = sorted(set(SHAPES.values()))
        shapes = [(rng.choice(kinds), _random_colour(rng, 40)) for _ in range(rng.randint(3, 7))]
    return shapes[:MAX_SHAPES]


def _random_colour(rng: random.Random, low: int) -> Colour:
    return (rng.randint(low, 255), rng.randint(low, 255), rng.randint(low, 255))


def _shape(canvas: ImageDraw.ImageDraw, shape: str, colour: Colour, rng: random.Random) -> None:
    size = rng.randint(25, 80)
    x = rng.randint(size, WIDTH - size)
    y = rng.randint(size, HEIGHT - 60 - size)
    box = (x - size, y - size, x + size, y + size)
    outline = (0, 0, 0)
    points: list[tuple[float, float]]
    if shape == "circle":
        canvas.ellipse(box, fill=colour, outline=outline, width=2)
    elif shape == "square":
        canvas.rectangle(box, fill=colour, outline=outline, width=2)
    elif shape == "triangle":
        points = [(x, y - size), (x + size, y + size), (x - size, y + size)]
        canvas.polygon(points, fill=colour, outline=outline)
    else:  # a five-pointed star: points alternate between the outer and the inner radius
        turn = rng.random() * math.pi
        points = [
            (
                x + (size if i % 2 == 0 else size * 0.4) * math.cos(turn + i * math.pi / 5),
                y + (size if i % 2 == 0 else size * 0.4) * math.sin(turn + i * math.pi / 5),
            )
            for i in range(10)
        ]
        canvas.polygon(points, fill=colour, outline=outline)


def _caption(canvas: ImageDraw.ImageDraw, text: str) -> None:
    canvas.rectangle((0, HEIGHT - 40, WIDTH, HEIGHT), fill=(255, 255, 255))
    font = ImageFont.load_default(size=18)
    shown = text if len(text) <= 48 else text[:47] + "…"
    canvas.text((WIDTH // 2, HEIGHT - 20), shown, fill=(0, 0, 0), font=font, anchor="mm")
