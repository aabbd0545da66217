"""The book's colours: the Okabe & Ito (2008) colour-blind-safe palette, and
which colour stands for which variant and which actor. Plain data, so that the
browser lab (no matplotlib there) and the matplotlib figures share it."""

COLORS = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "bluish_green": "#009E73",
    "orange": "#E69F00",
    "reddish_purple": "#CC79A7",
    "sky_blue": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}

VARIANT_COLORS = {
    "pre-skb": COLORS["reddish_purple"],
    "baseline": COLORS["vermillion"],
    "p1-p3": COLORS["sky_blue"],
    "p1-p5": COLORS["blue"],
}

ACTOR_COLORS = {"worker": COLORS["blue"], "reader": COLORS["orange"]}
