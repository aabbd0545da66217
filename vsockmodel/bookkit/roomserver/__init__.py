"""The workshop room's server (``serve.py`` in the bundle): standard library only.

files.py      the book's files: compressed once, validators, caching headers, 304
tally.py      the room's answers to the seeded problems, in memory, bounded
room.py       the room page: address, seed, lab check, presets with QR codes
qr.py         QR codes as SVG (segno, shipped beside the server)
instructor.py the instructor's pages: the tally, live
app.py        the request handler: which address answers what
cli.py        the command line: options, addresses printed, the tally's CSV
"""
