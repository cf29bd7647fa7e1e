#!/usr/bin/env python3
"""structure.py — the shape of lib/: who calls whom, circles, big structs.

Design note
  - Owns nothing at run time; a build-time report (`make structure`), run
    by hand or by make, single-threaded, standard library only.
  - The call graph is what the linker sees: for each object under
    BUILD/lib, the global symbols it defines and the ones it leaves
    undefined (`nm`, two invocations for the whole tree). An undefined
    symbol of file A that file B defines is an edge A -> B. Symbols that no
    lib/ object defines (libc, protobuf-c, the generated PulsarApi code)
    make no edge. Calls through function-pointer tables (upcalls) are not
    symbol references, so they do not show: that is the point, an upcall is
    how a lower room reaches up without depending on the upper one.
  - Rooms are folders under lib/; the layer map below is the one
    docs/ARCHITECTURE.md ("Layers and rooms") describes. An edge whose
    target is in a higher layer goes up the map. Inside lib/client the
    rooms have an order of their own (client < txn < producer, consumer <
    tableview), counted separately so a tree from before the rooms existed
    reads as zero there.
  - Circles are the strongly connected components of more than one file
    (Tarjan's algorithm, iterative so a long chain cannot exhaust Python's
    recursion limit).
  - Struct sizes come from the C sources (SRC/lib/**.[ch]), not from a
    build: a small tokenizer that drops comments, literals and preprocessor
    lines and counts the declarators at a struct's own brace level. A nested
    struct, union or enum member counts as one field; `int a, b;` counts as
    two. Members produced by a macro that expands to declarations are not
    seen (lib/ has none today).
  - Both inputs are paths, so the same script reads an old commit's checkout
    and build: tools/structure.py --build OLD/build --src OLD.
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

# Layer of each room (a folder under lib/); a room may call rooms of a lower
# or equal layer. Sub-rooms of client share the client layer.
LAYERS = {"core": 0, "conf": 1, "crypto": 1, "net": 2, "client": 3,
          "admin": 4, "connector": 4}
LAYER_NAMES = "core < conf/crypto < net < client < admin/connector"
# Order of the rooms inside lib/client (the doc's "may call" column).
CLIENT_ROOMS = {"client": 0, "client/txn": 1, "client/producer": 2,
                "client/consumer": 2, "client/tableview": 3}


def room_of(f):
    """Room of a file relative to lib/: its folder ("client/consumer")."""
    d = os.path.dirname(f)
    return d if d else "."


def layer_of(room):
    return LAYERS.get(room.split("/")[0])


# ------------------------------------------------------------- call graph

def lib_objects(build):
    base = os.path.join(build, "lib")
    objs = []
    for root, _dirs, files in os.walk(base):
        for name in files:
            if name.endswith(".o"):
                objs.append(os.path.join(root, name))
    return base, sorted(objs)


def nm_lines(args, objs):
    """`nm -A` over all objects; yields (object, type, symbol)."""
    out = subprocess.run(["nm", "-A"] + args + objs, check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        obj, _, rest = line.partition(":")
        parts = rest.split()
        if len(parts) >= 2:
            yield obj, parts[-2], parts[-1]


def read_graph(build, tree):
    """Files (relative to lib/, as .c) and edges {(a, b): [symbols]}.
    An object whose source is no longer in TREE/lib is left out: a build
    dir keeps the objects of files since moved or deleted, and those would
    show as duplicate definitions and edges that no longer exist."""
    base, objs = lib_objects(build)

    def src(obj):
        return os.path.relpath(obj, base)[:-2] + ".c"

    stale = [o for o in objs
             if not os.path.exists(os.path.join(tree, "lib", src(o)))]
    if stale:
        print(f"structure: {len(stale)} objects without a source in "
              f"{tree}/lib left out: {' '.join(src(o) for o in stale)}",
              file=sys.stderr)
        objs = [o for o in objs if o not in stale]
    if not objs:
        sys.exit(f"structure: no objects under {base} (build it first: make lib)")

    definers = defaultdict(list)
    for obj, _t, sym in nm_lines(["-g", "--defined-only"], objs):
        definers[sym].append(src(obj))
    for sym, files in sorted(definers.items()):
        if len(files) > 1:
            print(f"structure: warning: {sym} defined in {' '.join(files)}",
                  file=sys.stderr)
    edges = defaultdict(list)
    for obj, _t, sym in nm_lines(["-u"], objs):
        a = src(obj)
        for b in definers.get(sym, ()):
            if b != a:
                edges[(a, b)].append(sym)
    return [src(o) for o in objs], edges


def tarjan(nodes, edges):
    """Strongly connected components (lists of nodes), iteratively."""
    succ = defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    index, low, on_stack = {}, {}, set()
    stack, comps, counter = [], [], 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(succ[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def goes_up(a, b):
    la, lb = layer_of(room_of(a)), layer_of(room_of(b))
    return la is not None and lb is not None and lb > la


def goes_up_rooms(a, b):
    ra, rb = CLIENT_ROOMS.get(room_of(a)), CLIENT_ROOMS.get(room_of(b))
    return ra is not None and rb is not None and rb > ra


def room_key(room):
    layer = layer_of(room)
    return (99 if layer is None else layer, CLIENT_ROOMS.get(room, 0), room)


def print_graph(files, edges, show_symbols):
    rooms = defaultdict(list)
    for f in files:
        rooms[room_of(f)].append(f)
    for r in rooms:
        if layer_of(r) is None:
            print(f"structure: warning: room {r} is not in the layer map "
                  f"({LAYER_NAMES})", file=sys.stderr)
    print(f"== edges (file -> file, by room; layers {LAYER_NAMES}) ==")
    for room in sorted(rooms, key=room_key):
        out = sorted(e for e in edges if room_of(e[0]) == room)
        print(f"[{room}] {len(rooms[room])} files, {len(out)} edges out")
        for a, b in out:
            mark = " UP" if goes_up(a, b) else (
                " UP-ROOM" if goes_up_rooms(a, b) else "")
            syms = edges[(a, b)]
            extra = ": " + " ".join(sorted(syms)) if show_symbols else ""
            print(f"  {a} -> {b} ({len(syms)}){mark}{extra}")
    print("== room -> room (edges) ==")
    rr = defaultdict(int)
    for a, b in edges:
        if room_of(a) != room_of(b):
            rr[(room_of(a), room_of(b))] += 1
    for (ra, rb), n in sorted(rr.items(), key=lambda x: (room_key(x[0][0]), room_key(x[0][1]))):
        print(f"  {ra} -> {rb}: {n}")


def print_circles(files, edges):
    comps = [c for c in tarjan(sorted(files), edges) if len(c) > 1]
    comps.sort(key=lambda c: (-len(c), c))
    print(f"== circles (strongly connected components of more than one file): {len(comps)} ==")
    for i, c in enumerate(comps, 1):
        print(f"circle {i} ({len(c)} files): {' '.join(c)}")
    largest = comps[0] if comps else []
    print(f"largest circle: {len(largest)} files"
          + (f": {' '.join(largest)}" if largest else ""))
    return comps, largest


# ------------------------------------------------------------- structs

TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")


def strip_c(text):
    """C text with comments, string/char literals and preprocessor lines
    blanked out; newlines kept so line numbers stay right."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a directive, with its backslash continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        i += 1
    return "".join(out)


def tokens_with_lines(text):
    line = 1
    pos = 0
    for m in TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        yield m.group(0), line


class Frame:
    """One open brace: a struct/union body or anything else."""
    def __init__(self, kind, tag, line, nested):
        self.kind, self.tag, self.line, self.nested = kind, tag, line, nested
        self.fields = 0
        self.commas = 0
        self.parens = 0


def structs_in(text, path):
    """[(fields, name, path, line)] for each named struct or union."""
    toks = list(tokens_with_lines(strip_c(text)))
    found, stack = [], []
    naming = None          # an anonymous record just closed at file scope
    for i, (t, line) in enumerate(toks):
        top = stack[-1] if stack else None
        if naming is not None:
            if re.match(r"[A-Za-z_]", t):
                found.append((naming[0], t, path, naming[1]))
                naming = None
            elif t in ";{=(":
                naming = None
        if t == "{":
            prev = toks[i - 1][0] if i else ""
            prev2 = toks[i - 2][0] if i > 1 else ""
            if prev in ("struct", "union"):
                stack.append(Frame("record", None, line, top is not None))
            elif prev2 in ("struct", "union") and re.match(r"[A-Za-z_]", prev):
                stack.append(Frame("record", prev, line, top is not None))
            else:
                stack.append(Frame("other", None, line, top is not None))
        elif t == "}":
            if not stack:
                continue
            f = stack.pop()
            if f.kind == "record":
                if f.tag:
                    found.append((f.fields, f.tag, path, f.line))
                elif not f.nested:
                    naming = (f.fields, f.line)
        elif top is None or top.kind != "record":
            continue
        elif t in "([":
            top.parens += 1
        elif t in ")]":
            top.parens -= 1
        elif top.parens == 0 and t == ",":
            top.commas += 1
        elif top.parens == 0 and t == ";":
            top.fields += 1 + top.commas
            top.commas = 0
    return found


def read_structs(src):
    base = os.path.join(src, "lib")
    found = []
    for root, _dirs, files in os.walk(base):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                p = os.path.join(root, name)
                with open(p, encoding="utf-8", errors="replace") as fh:
                    found += structs_in(fh.read(), os.path.relpath(p, base))
    return found


def print_structs(structs, top):
    structs = sorted(structs, key=lambda s: (-s[0], s[1], s[2]))
    print(f"== structs of lib/ with the most fields (top {top}; "
          f"a nested struct/union counts as one) ==")
    for fields, name, path, line in structs[:top]:
        print(f"  {fields:4d}  {name}  ({path}:{line})")
    return structs[0] if structs else None


# ------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(
        description="File -> file call graph of lib/ from a build's objects, "
                    "its circles, and the structs of lib/ with the most fields.")
    ap.add_argument("--build", default="build",
                    help="build dir whose lib/**.o are read (default: build)")
    ap.add_argument("--src", default=".",
                    help="source tree of that build: lib/**.[ch] parsed for structs, "
                         "objects without a source there left out (default: .)")
    ap.add_argument("--symbols", action="store_true",
                    help="list the symbols behind each edge")
    ap.add_argument("--no-edges", action="store_true",
                    help="only the circles, struct sizes and counts")
    ap.add_argument("--top", type=int, default=10,
                    help="how many structs to list (default: 10)")
    a = ap.parse_args()

    files, edges = read_graph(a.build, a.src)
    if not a.no_edges:
        print_graph(files, edges, a.symbols)
    comps, largest = print_circles(files, edges)
    biggest = print_structs(read_structs(a.src), a.top)
    up = sum(1 for (x, y) in edges if goes_up(x, y))
    up_rooms = sum(1 for (x, y) in edges if goes_up_rooms(x, y))
    in_circles = sum(len(c) for c in comps)
    print("== counts ==")
    print(f"files={len(files)} edges={len(edges)} up_edges={up} "
          f"up_edges_client_rooms={up_rooms} circles={len(comps)} "
          f"files_in_circles={in_circles} largest_circle={len(largest)} "
          f"biggest_struct={biggest[1] if biggest else '-'} "
          f"biggest_struct_fields={biggest[0] if biggest else 0}")


if __name__ == "__main__":
    main()
