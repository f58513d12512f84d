#!/usr/bin/env python3
"""Captures GeoTests.Vectors.cs from a real redis-server 7.0 (run once; the tests only read the file).

    redis-server --port 7391 --save "" --appendonly no --daemonize yes
    python3 tests/Diagnostics.Server.UnitTests/DataTypes/capture_geo_vectors.py > tests/Diagnostics.Server.UnitTests/DataTypes/GeoTests.Vectors.cs
    redis-cli -p 7391 shutdown nosave

Every value comes from redis-cli's output for the command quoted above it (redis-cli -p 7391 ...,
raw output: one line per reply element). Coordinates and sizes are written with Python's repr,
the shortest text of the double, so redis-server's strtod and .NET's parser read the same doubles.
"""
import os
import random
import subprocess

PORT = "7391"
SEED = int(os.environ.get("GEO_SEED", "20240607"))        # another seed and more searches make a soak run
SEARCHES = int(os.environ.get("GEO_SEARCHES", "400"))


def cli(*args):
    out = subprocess.run(["redis-cli", "-p", PORT, *map(str, args)], capture_output=True, text=True, check=True).stdout
    lines = out.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def command_text(*args):
    return "redis-cli -p " + PORT + " " + " ".join(map(str, args))


def cs(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def num(x):
    return repr(float(x))


out = []
emit = out.append

# ---------------------------------------------------------------- hand-picked places and edges
PLACES = [
    ("Palermo", 13.361389, 38.115556), ("Catania", 15.087269, 37.502669),
    ("London", -0.127758, 51.507351), ("Paris", 2.352222, 48.856613),
    ("NewYork", -74.005974, 40.712776), ("Tokyo", 139.691706, 35.689487),
    ("Sydney", 151.20929, -33.86882), ("BuenosAires", -58.381559, -34.603684),
    ("Reykjavik", -21.9424, 64.1466), ("Longyearbyen", 15.6356, 78.2232),
    ("Alert", -62.3481, 82.5018), ("McMurdo", 166.6863, -77.8419),
    ("Suva", 178.4419, -18.1416), ("Apia", -171.7514, -13.8333),
    ("Nairobi", 36.8219, -1.2921), ("Quito", -78.4678, -0.1807),
    ("origin", 0, 0), ("north-limit", 0, 85.05112878), ("south-limit", 0, -85.05112878),
    ("east-limit", 180, 0), ("west-limit", -180, 0), ("ne-corner", 180, 85.05112878),
    ("sw-corner", -180, -85.05112878), ("antimeridian-w", -179.9999, 10), ("antimeridian-e", 179.9999, 10),
    ("near-north", 12, 85.05), ("near-south", -12, -85.05),
    ("straddle-ne", 1e-7, 1e-7), ("straddle-sw", -1e-7, -1e-7), ("straddle-se", 1e-7, -1e-7), ("straddle-nw", -1e-7, 1e-7),
    ("equator-e", 90, 0), ("equator-w", -90, 0), ("greenwich-n", 0, 45),
    ("dup-a", 2.352222, 48.856613), ("dup-b", 2.352222, 48.856613),
]
geoadd = ["GEOADD", "places"]
for name, lon, lat in PLACES:
    geoadd += [num(lon), num(lat), name]
cli("DEL", "places", "ties")
emit("// " + command_text(*geoadd) + "  -> " + cli(*geoadd)[0])
names = [p[0] for p in PLACES]
scores = cli("ZMSCORE", "places", *names)
pos = cli("GEOPOS", "places", *names)
hashes = cli("GEOHASH", "places", *names)
emit("// " + command_text("ZMSCORE", "places", *names))
emit("// " + command_text("GEOPOS", "places", *names))
emit("// " + command_text("GEOHASH", "places", *names))
emit("private static readonly PlaceVector[] Places =")
emit("[")
for i, (name, lon, lat) in enumerate(PLACES):
    emit(f"    new({cs(name)}, {num(lon)}, {num(lat)}, {cs(scores[i])}, {cs(pos[2 * i])}, {cs(pos[2 * i + 1])}, {cs(hashes[i])}),")
emit("];")
emit("")

# ---------------------------------------------------------------- GEODIST in every unit
PAIRS = [("Palermo", "Catania"), ("London", "Tokyo"), ("Suva", "Apia"), ("origin", "north-limit"),
         ("origin", "greenwich-n"), ("dup-a", "dup-b"), ("sw-corner", "ne-corner"), ("antimeridian-w", "antimeridian-e"),
         ("straddle-ne", "straddle-sw"), ("McMurdo", "Alert"), ("equator-e", "equator-w"), ("east-limit", "west-limit"),
         ("NewYork", "Sydney"), ("Quito", "Nairobi")]
emit("private static readonly DistanceVector[] Distances =")
emit("[")
for a, b in PAIRS:
    for unit in ("m", "km", "ft", "mi", "KM"):
        args = ("GEODIST", "places", a, b, unit)
        emit(f"    new({cs(a)}, {cs(b)}, {cs(unit)}, {cs(cli(*args)[0])}),   // {command_text(*args)}")
emit("];")
emit("")

# ---------------------------------------------------------------- hand-picked searches
HAND_PICKED = [
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200, "km"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 100, "km"),
    ("FROMMEMBER", "London", "BYRADIUS", 500, "km"),
    ("FROMMEMBER", "Palermo", "BYBOX", 400, 400, "km"),
    ("FROMLONLAT", 0, 0, "BYRADIUS", 1, "m"),
    ("FROMLONLAT", 0, 0, "BYBOX", 1, 1, "m"),
    ("FROMLONLAT", 0, 0, "BYRADIUS", 10000, "km"),
    ("FROMLONLAT", 180, 0, "BYRADIUS", 500, "mi"),
    ("FROMLONLAT", -180, 10, "BYRADIUS", 100, "km"),
    ("FROMLONLAT", 179.99, 10, "BYBOX", 100, 100, "km"),
    ("FROMMEMBER", "Suva", "BYBOX", 4000, 4000, "km"),
    ("FROMMEMBER", "Apia", "BYRADIUS", 1500, "km"),
    ("FROMLONLAT", 0, 85.05112878, "BYRADIUS", 0, "m"),
    ("FROMLONLAT", 180, 85.05112878, "BYRADIUS", 0, "m"),
    ("FROMLONLAT", 0, 85, "BYRADIUS", 1000, "km"),
    ("FROMMEMBER", "Alert", "BYRADIUS", 2000, "km"),
    ("FROMMEMBER", "McMurdo", "BYBOX", 3000, 9000, "km"),
    ("FROMLONLAT", 0, 0, "BYRADIUS", 1e30, "m"),
    ("FROMLONLAT", 0, 0, "BYRADIUS", "inf", "m"),
    ("FROMLONLAT", 10, 10, "BYBOX", "inf", "inf", "km"),
    ("FROMLONLAT", 10, 10, "BYRADIUS", 0, "m"),
    ("FROMLONLAT", 10, 10, "BYBOX", 0, 0, "m"),
    ("FROMMEMBER", "origin", "BYBOX", 0, 0, "km"),
    ("FROMMEMBER", "dup-a", "BYRADIUS", 0, "m"),
    ("FROMMEMBER", "north-limit", "BYRADIUS", 0, "m"),
    ("FROMMEMBER", "near-north", "BYRADIUS", 100, "km"),
    ("FROMMEMBER", "near-south", "BYBOX", 2000, 300, "km"),
    ("FROMLONLAT", 100, 20, "BYBOX", 20000, 5000, "km"),
    ("FROMLONLAT", -170, -60, "BYBOX", 40000, 40000, "km"),
    ("FROMLONLAT", 2.35, 48.85, "BYRADIUS", 1000000, "ft"),
    ("FROMLONLAT", 90, 0, "BYRADIUS", 6000, "mi"),
    ("FROMLONLAT", 0, 0, "BYBOX", 20, 10, "m"),
    ("FROMLONLAT", 1e-7, 0, "BYRADIUS", 0.02, "m"),
    ("FROMLONLAT", -0.0, -0.0, "BYRADIUS", "-0", "km"),
]


def search_line(args, key="places"):
    """GEOSEARCH unsorted (plain) and ASC WITHDIST WITHHASH WITHCOORD."""
    plain = ("GEOSEARCH", key, *args)
    members = cli(*plain)
    members = [m for m in members if m != ""]
    full = ("GEOSEARCH", key, *args, "ASC", "WITHDIST", "WITHHASH", "WITHCOORD")
    rows = [r for r in cli(*full) if r != ""]
    assert len(rows) == 5 * len(members), (args, rows)
    asc = ", ".join(f"new({cs(rows[i])}, {cs(rows[i + 1])}, {rows[i + 2]}, {cs(rows[i + 3])}, {cs(rows[i + 4])})"
                    for i in range(0, len(rows), 5))
    return plain, full, members, asc


emit("private static readonly SearchVector[] Searches =")
emit("[")
for args in HAND_PICKED:
    plain, full, members, asc = search_line(args)
    emit(f"    // {command_text(*plain)}")
    emit(f"    // {command_text(*full)}")
    emit(f"    new({cs(' '.join(map(str, args)))}, [{', '.join(map(cs, members))}], [{asc}]),")
emit("];")
emit("")

# ---------------------------------------------------------------- ties: sorting with equal distances
# 72 members on 6 positions: ASC, DESC, with and without COUNT (Redis's pqsort when COUNT < found).
rnd = random.Random(7)
positions = [(10.0, 10.0), (10.01, 10.0), (10.0, 10.01), (9.99, 10.0), (10.0, 9.99), (10.02, 10.02)]
ties = []
for i in range(72):
    lon, lat = positions[rnd.randrange(len(positions))]
    ties += [num(lon), num(lat), f"t{i:02d}"]
cli("DEL", "ties")
emit("// " + command_text("GEOADD", "ties", *ties))
cli("GEOADD", "ties", *ties)
emit("private static readonly (double Longitude, double Latitude, string Member)[] TieMembers =")
emit("[")
for i in range(0, len(ties), 3):
    emit(f"    ({ties[i]}, {ties[i + 1]}, {cs(ties[i + 2])}),")
emit("];")
emit("private static readonly (string Options, string[] Members)[] TieOrders =")
emit("[")
for opts in ([], ["ASC"], ["DESC"], ["COUNT", 1], ["COUNT", 5], ["COUNT", 13, "ASC"], ["COUNT", 30, "DESC"], ["COUNT", 50],
             ["COUNT", 71, "DESC"], ["COUNT", 72], ["COUNT", 100, "DESC"], ["COUNT", 7, "ANY"], ["COUNT", 9, "ANY", "DESC"],
             ["COUNT", 20, "ANY", "ASC"]):
    args = ("GEOSEARCH", "ties", "FROMLONLAT", 10.0, 10.0, "BYRADIUS", 10, "km", *opts)
    members = [m for m in cli(*args) if m != ""]
    emit(f"    // {command_text(*args)}")
    emit(f"    ({cs(' '.join(map(str, opts)))}, [{', '.join(map(cs, members))}]),")
emit("];")
emit("")

# ---------------------------------------------------------------- randomised points and searches
rnd = random.Random(SEED)
LAT = 85.05112878
points = []


def rlon():
    return rnd.uniform(-180, 180)


def rlat():
    return rnd.uniform(-LAT, LAT)


for _ in range(350):
    points.append((rlon(), rlat()))
CLUSTERS = [(0.0, 0.0), (179.95, -5.0), (-179.95, 5.0), (2.35, 48.85), (90.0, 45.0), (0.0, 84.9), (-45.0, -84.0),
            (-90.0, 0.0), (45.0, 66.5), (135.0, 80.5), (11.25, 22.5)]
for cx, cy in CLUSTERS:
    for _ in range(50):
        spread = 10 ** rnd.uniform(-6, 0.5)
        x = min(180.0, max(-180.0, cx + rnd.gauss(0, spread)))
        y = min(LAT, max(-LAT, cy + rnd.gauss(0, spread)))
        points.append((x, y))
# grid lines of the geohash cells, and a hair either side
for _ in range(100):
    k = rnd.randrange(1, 12)
    x = -180 + 360 * rnd.randrange(0, 2 ** k + 1) / 2 ** k
    y = -LAT + 2 * LAT * rnd.randrange(0, 2 ** k + 1) / 2 ** k
    x += rnd.choice([0, 0, 1e-9, -1e-9, 1e-6])
    y += rnd.choice([0, 0, 1e-9, -1e-9, 1e-6])
    points.append((min(180.0, max(-180.0, x)), min(LAT, max(-LAT, y))))
for _ in range(20):   # duplicates: equal scores, ordered by member
    points.append(points[rnd.randrange(len(points))])
# shortest decimal texts with 1..10 decimals, as clients send them
points = [(float(f"{x:.{rnd.randrange(1, 11)}f}"), float(f"{y:.{rnd.randrange(1, 11)}f}")) for x, y in points]
points = [(x, y) if -LAT <= y <= LAT else (x, LAT if y > 0 else -LAT) for x, y in points]

cli("DEL", "rnd")
for start in range(0, len(points), 200):
    args = ["GEOADD", "rnd"]
    for i in range(start, min(start + 200, len(points))):
        args += [num(points[i][0]), num(points[i][1]), f"m{i}"]
    cli(*args)
names = [f"m{i}" for i in range(len(points))]
rscores = cli("ZMSCORE", "rnd", *names)
rpos = cli("GEOPOS", "rnd", *names)
rhash = cli("GEOHASH", "rnd", *names)

UNITS = [("m", 1.0), ("km", 1000.0), ("ft", 0.3048), ("mi", 1609.34)]
searches = []
total = 0
while len(searches) < SEARCHES:
    kind = rnd.random()
    if kind < 0.3:
        centre = ("FROMMEMBER", f"m{rnd.randrange(len(points))}")
    elif kind < 0.65:
        cx, cy = CLUSTERS[rnd.randrange(len(CLUSTERS))]
        s = 10 ** rnd.uniform(-5, 0.5)
        centre = ("FROMLONLAT", num(min(180.0, max(-180.0, round(cx + rnd.gauss(0, s), 7)))),
                  num(min(LAT, max(-LAT, round(cy + rnd.gauss(0, s), 7)))))
    else:
        centre = ("FROMLONLAT", num(round(rlon(), 6)), num(round(rlat(), 6)))
    unit, factor = UNITS[rnd.randrange(4)]
    low = 4 if kind >= 0.65 else -1   # random centres are mostly far from any point
    if rnd.random() < 0.55:
        metres = 0.0 if rnd.random() < 0.03 else 10 ** rnd.uniform(low, 7.3)
        shape = ("BYRADIUS", num(float(f"{metres / factor:.6g}")), unit)
    else:
        w = 0.0 if rnd.random() < 0.03 else 10 ** rnd.uniform(low, 7.5)
        h = 0.0 if rnd.random() < 0.03 else w * 10 ** rnd.uniform(-1.5, 1.5)
        shape = ("BYBOX", num(float(f"{w / factor:.6g}")), num(float(f"{h / factor:.6g}")), unit)
    args = ("GEOSEARCH", "rnd", *centre, *shape, "WITHDIST")
    rows = [r for r in cli(*args) if r != ""]
    found = len(rows) // 2
    if found > 150 and rnd.random() < 0.9:
        continue   # keep the file small: a few whole-world searches are enough
    if found == 0 and rnd.random() < 0.7:
        continue   # some empty replies, mostly ones with members
    order = ""
    ordered = []
    if rnd.random() < 0.35 and found > 1:
        opts = [rnd.choice(["ASC", "DESC"])] if rnd.random() < 0.7 else []
        if rnd.random() < 0.6:
            opts += ["COUNT", str(rnd.randrange(1, found + 2))]
            if rnd.random() < 0.25:
                opts.append("ANY")
        if not opts:
            opts = ["DESC"]
        order = " ".join(opts)
        ordered = [m for m in cli("GEOSEARCH", "rnd", *centre, *shape, *opts) if m != ""]
    # STOREDIST keeps each distance (metres / unit) whole: ZRANGE WITHSCORES prints it with %.17g.
    cli("GEOSEARCHSTORE", "dst", "rnd", *centre, *shape, "STOREDIST")
    stored = [v for v in cli("ZRANGE", "dst", "0", "-1", "WITHSCORES") if v != ""]
    exact = {stored[i]: stored[i + 1] for i in range(0, len(stored), 2)}
    assert len(exact) == found
    total += found
    searches.append((args, rows, exact, order, ordered))

emit(f"// The randomised set (seed {SEED}): GEOADD rnd lon lat m0 ... in batches of 200, then")
emit("// " + command_text("ZMSCORE", "rnd", "m0", "...") + " / GEOPOS / GEOHASH rnd m0 ...")
emit("// P lines: member lon lat score geopos-lon geopos-lat geohash.")
emit("// S lines: the GEOSEARCH arguments after the key, with WITHDIST; R: its reply, member:distance in scan order,")
emit("// each with the distance GEOSEARCHSTORE dst rnd <same area> STOREDIST stored (ZRANGE dst 0 -1 WITHSCORES);")
emit("// O: options then the members GEOSEARCH rnd <same area> <options> replied (sorting, COUNT).")
emit(f"// {len(points)} points, {len(searches)} searches, {total} members found in all.")
emit('private const string RandomVectorsText = """')
for i, (x, y) in enumerate(points):
    emit(f"P m{i} {num(x)} {num(y)} {rscores[i]} {rpos[2 * i]} {rpos[2 * i + 1]} {rhash[i]}")
for args, rows, exact, order, ordered in searches:
    emit("S " + " ".join(map(str, args[2:-1])))
    emit("R " + " ".join(f"{rows[i]}:{rows[i + 1]}:{exact[rows[i]]}" for i in range(0, len(rows), 2)))
    if order:
        emit(f"O {order} | " + " ".join(ordered))
emit('""";')

print("// <auto-generated> by capture_geo_vectors.py from redis-server " + cli("INFO", "server")[1].split(":")[1].strip() + " </auto-generated>")
print("namespace Diagnostics.Server.Tests;")
print()
print("public sealed partial class GeoTests")
print("{")
for line in out:
    print(("    " + line) if line else "")
print("}")
