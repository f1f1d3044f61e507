"""A class's worth of submissions: names, shards, resuming, merging shard
results, and the similarity report over the submissions' lab regions."""

import hashlib
import json
import os
import re
import stat
from typing import AbstractSet, Any, Dict, List, Optional, Sequence, Set, Tuple, TypeVar

from . import lab_regions

T = TypeVar("T")
# A submission's shingles: (student file, shingle hash).
Fingerprint = Set[Tuple[str, str]]
# (score, a, b, shared shingles) of one pair of submissions.
Pair = Tuple[float, str, str, int]

SUBMISSION_SUFFIXES = (".bundle", ".patch", ".diff", ".zip")
DIGEST_LIMIT = 64 << 20  # bytes of a submission hashed to decide whether it changed


class BatchError(Exception):
    """A batch that cannot be graded as given."""


def submission_name(entry: str) -> str:
    """The student's name for a batch entry: without its suffix, and with
    control and format characters (a right-to-left override, an escape)
    made '_', so that the gradebook shows the name as it is stored."""
    import unicodedata
    for suffix in SUBMISSION_SUFFIXES:
        if entry.endswith(suffix):
            entry = entry[:-len(suffix)]
            break
    return "".join("_" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c
                   for c in entry)


def entries(folder: str) -> List[Tuple[str, str]]:
    """[(entry, name)] of a batch folder, sorted; raises BatchError naming any
    two entries that would write the same student's results."""
    found = sorted(e for e in os.listdir(folder) if not e.startswith("."))
    by_name: Dict[str, List[str]] = {}
    for e in found:
        by_name.setdefault(submission_name(e), []).append(e)
    clashes = [" and ".join(v) for v in by_name.values() if len(v) > 1]
    if clashes:
        raise BatchError("these entries are the same student twice (rename or remove one): " +
                         "; ".join(clashes))
    return [(e, submission_name(e)) for e in found]


def parse_shard(text: Optional[str]) -> Tuple[int, int]:
    """'2/5' -> (2, 5); raises BatchError."""
    m = re.fullmatch(r"(\d+)/(\d+)", text or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise BatchError(f"--shard wants I/N with 1 <= I <= N (e.g. 1/4), not {text!r}")
    return int(m.group(1)), int(m.group(2))


def shard_of(items: Sequence[T], shard: Tuple[int, int]) -> List[T]:
    """The items of shard (i, n): every n-th, starting at the i-th. The batch
    order is sorted by name, so every machine computes the same split."""
    i, n = shard
    return [x for k, x in enumerate(items) if k % n == i - 1]


def digest(path: str) -> str:
    """A hash of the submission at @p path (file or folder), to tell a resumed
    batch whether it changed since it was graded."""
    h = hashlib.sha256()
    budget = [DIGEST_LIMIT]

    def add_file(p: str, rel: str) -> None:
        h.update(rel.encode() + b"\0")
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            h.update(b"link:" + os.readlink(p).encode())
            return
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block; a device never ends
            h.update(b"special:%o" % st.st_mode)
            return
        with open(p, "rb") as f:
            while budget[0] > 0:
                chunk = f.read(min(1 << 20, budget[0]))
                if not chunk:
                    break
                budget[0] -= len(chunk)
                h.update(chunk)
    if os.path.isdir(path):
        for base, dirs, files in os.walk(path):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(base, f)
                add_file(p, os.path.relpath(p, path))
    else:
        add_file(path, "")
    return h.hexdigest()


def finished(out: str, want_digest: str) -> Optional[Dict[str, Any]]:
    """The grade record in @p out when it was graded from the same submission
    and without a grader error (a resumed batch grades the rest)."""
    try:
        with open(os.path.join(out, "grade.json")) as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return None
    if rec.get("digest") != want_digest or rec.get("error"):
        return None
    return rec


def records_under(folders: Sequence[str]) -> List[Tuple[str, Dict[str, Any]]]:
    """[(name, record)] of every graded submission in the given batch output
    folders (shards), sorted by name; raises BatchError on a student graded
    in two shards with different results."""
    found: Dict[str, Tuple[str, Dict[str, Any]]] = {}
    for folder in folders:
        if not os.path.isdir(folder):
            raise BatchError(f"{folder} is not a folder of graded submissions")
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name, "grade.json")
            if not os.path.isfile(path):
                continue
            with open(path) as f:
                rec = json.load(f)
            if name in found and found[name][1] != rec:
                raise BatchError(f"{name} was graded in both {found[name][0]} and {folder}")
            found[name] = (folder, rec)
    return sorted((n, rec) for n, (_, rec) in found.items())


# ---------------------------------------------------------------- similarity

KEYWORDS = set("""alignas alignof asm auto bool break case catch char class const constexpr
continue default delete do double else enum explicit extern false float for friend goto if
inline int long namespace new noexcept nullptr operator private protected public register
reinterpret_cast return short signed sizeof static static_cast struct switch template this
throw true try typedef typename union unsigned using virtual void volatile while uint8_t
uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t size_t""".split())
TOKEN = re.compile(r"[A-Za-z_]\w*|0[xX][0-9a-fA-F]+|\d+|\S")
SHINGLE = 6


def region_text(path: str, text: str, lab: str) -> str:
    """The text of lab @p lab's regions in one student file (the whole file
    when its markers are gone or broken)."""
    try:
        regions = [r for r in lab_regions.parse_regions(path, text) if r.lab == lab]
    except lab_regions.RegionError:
        regions = []
    if not regions:
        return text
    lines = text.splitlines()
    return "\n".join("\n".join(lines[r.begin:r.end - 1]) for r in regions)


def normalise(text: str, path: str) -> List[str]:
    """Tokens of @p text with comments and layout gone and, in C and C++,
    every identifier that is not a keyword replaced by one placeholder."""
    comment = lab_regions.comment_for(path) or "//"
    if comment == "//":
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
    else:
        text = re.sub(r"(?m)(^|\s)#[^\n]*", " ", text)
    tokens = TOKEN.findall(text)
    if comment == "//":
        tokens = ["ID" if re.match(r"[A-Za-z_]", t) and t not in KEYWORDS else t for t in tokens]
    return tokens


def shingles(tokens: List[str]) -> Set[str]:
    """Stable hashes (the same in every process) of each run of SHINGLE tokens."""
    return {hashlib.sha1("\x1f".join(tokens[i:i + SHINGLE]).encode()).hexdigest()[:16]
            for i in range(max(0, len(tokens) - SHINGLE + 1))}


def fingerprint(files: Dict[str, str], lab: str, whole: bool = False) -> Fingerprint:
    """The shingle set of a submission: @p files maps each student file's path
    to its text; only the lab's regions count unless @p whole (or the markers
    are gone: then the whole file does, less what the starter holds, which
    the similarity report never counts)."""
    found: Fingerprint = set()
    for path, text in sorted(files.items()):
        part = text if whole else region_text(path, text, lab)
        found |= {(path, s) for s in shingles(normalise(part, path))}
    return found


def similarity(prints: Dict[str, Fingerprint],
               common: AbstractSet[Tuple[str, str]] = frozenset()) -> List[Pair]:
    """[(score, a, b, shared)] for every pair of @p prints ({name: shingle
    set}), best first; shingles in @p common (the starter's) do not count.
    The score is the Jaccard index of the two sets."""
    names = sorted(prints)
    sets = {n: prints[n] - common for n in names}
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            union = len(sets[a] | sets[b])
            shared = len(sets[a] & sets[b])
            if union:
                pairs.append((shared / union, a, b, shared))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    return pairs


def write_similarity(pairs: List[Pair], path_csv: str, path_txt: str, top: int = 20) -> None:
    import csv
    with open(path_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["score", "a", "b", "shared_shingles"])
        for score, a, b, shared in pairs:
            w.writerow([f"{score:.3f}", a, b, shared])
    lines = ["Pairs of submissions ranked by how much of their lab regions they share, after",
             "removing comments and layout and renaming every identifier (1.000: the same code;",
             "what the starter already holds does not count). Read the top pairs' code.", ""]
    for score, a, b, shared in pairs[:top]:
        lines.append(f"{score:.3f}  {a}  {b}  ({shared} shared)")
    with open(path_txt, "w") as f:
        f.write("\n".join(lines) + "\n")


def save_fingerprint(out: str, prints: Fingerprint) -> None:
    with open(os.path.join(out, "fingerprint.json"), "w") as f:
        json.dump(sorted([p, s] for p, s in prints), f)


def load_fingerprint(out: str) -> Optional[Fingerprint]:
    try:
        with open(os.path.join(out, "fingerprint.json")) as f:
            return {(p, s) for p, s in json.load(f)}
    except (OSError, ValueError):
        return None
