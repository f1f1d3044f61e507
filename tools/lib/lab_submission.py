"""Taking in a submission: what form it has (a folder, a git bundle, a .zip,
a patch against the starter), unpacking it into a folder, finding each
student file in it (at its place, or uploaded flat or one folder deep), and
assembling the tree to grade: the grader's own checkout with only the
rubric's student files taken from the submission. lab_grade builds and
judges that tree.
"""

import os
import shutil
import stat
import subprocess
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import lab_regions, lab_safe, process

MAX_STUDENT_FILE = 4 << 20  # bytes; a larger "source file" is refused
OUTPUT_TAIL_LINES = 40
OUTPUT_TAIL_CHARS = 6000


class Rejected(Exception):
    """The submission cannot be read (a patch that does not apply, a bad bundle)."""


def _clean_env() -> Dict[str, str]:
    env = dict(os.environ)
    for key in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CMAKE_BUILD_PARALLEL_LEVEL", "DESTDIR"):
        env.pop(key, None)
    return env


def run_limited(cmd: Sequence[str], timeout: float, log_path: str, cwd: Optional[str] = None,
                env: Optional[Dict[str, str]] = None) -> Tuple[Optional[int], float]:
    """Runs @p cmd with stdout and stderr to @p log_path, killing its whole
    process group after @p timeout seconds. Returns (status or None on timeout, seconds)."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        # Leaving the block kills the group: also any child left behind.
        with process.Group(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd,
                           env=env or _clean_env()) as child:
            status = child.wait(timeout=timeout)
    return status, time.monotonic() - start


def read_text(path: str, limit: int = 1 << 20) -> str:
    """The text of a regular file (never a link, FIFO or device), '' if none."""
    return lab_safe.read_text(path, limit)


def tail(text: str, lines: int = OUTPUT_TAIL_LINES, chars: int = OUTPUT_TAIL_CHARS) -> str:
    kept = text.replace("\r", "").splitlines()[-lines:]
    out = "\n".join(kept)
    return out[-chars:]


MAX_ZIP_TOTAL = 64 << 20   # bytes a .zip may unpack to
MAX_ZIP_MEMBERS = 20000


def submission_form(path: str) -> str:
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        return "tree"
    try:
        head = lab_safe.read_regular(os.path.abspath(path), 64)
    except (lab_safe.Unsafe, OSError):
        return "unknown"
    if head.startswith((b"# v2 git bundle", b"# v3 git bundle")):
        return "bundle"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if path.endswith((".patch", ".diff")) or head.startswith((b"diff ", b"--- ", b"From ")):
        return "patch"
    return "unknown"


def unzip(path: str, dest: str, refused: List[str]) -> None:
    """Unpacks the .zip at @p path into @p dest: regular files only, no path
    leaving @p dest, at most MAX_ZIP_TOTAL bytes; names what it refused in
    @p refused. Raises Rejected."""
    import zipfile
    os.makedirs(dest, exist_ok=True)
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if len(members) > MAX_ZIP_MEMBERS:
                raise Rejected(f"the .zip holds {len(members)} files, more than {MAX_ZIP_MEMBERS}")
            total = 0
            for m in members:
                name = m.filename
                mode = (m.external_attr >> 16) & 0o170000
                if m.is_dir():
                    continue
                if mode and mode != 0o100000:  # symbolic links, devices: never made
                    refused.append(f"{name} in the .zip is {lab_safe.describe_mode(mode)}")
                    continue
                parts = name.replace("\\", "/").split("/")
                if name.startswith("/") or ".." in parts:
                    refused.append(f"{name} in the .zip leaves its folder")
                    continue
                total += m.file_size
                if total > MAX_ZIP_TOTAL:
                    raise Rejected(f"the .zip unpacks to more than {MAX_ZIP_TOTAL >> 20} MiB")
                target = os.path.join(dest, *parts)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with z.open(m) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise Rejected(f"the .zip could not be read: {e}")


def unpack(grade: Any, root: str, scratch: str) -> str:
    """Makes the submission a folder; returns its path. Raises Rejected."""
    path = grade.submission
    grade.form = submission_form(path)
    if grade.form == "tree":
        return path
    dest = os.path.join(scratch, "submission")
    log = os.path.join(scratch, "unpack.log")
    if grade.form == "unknown":
        raise Rejected("it is neither a folder, a git bundle, a .zip nor a patch (a patch starts "
                       "with 'diff ' or '--- ' and is made with `git diff`)")
    if grade.form == "zip":
        refused: List[str] = []
        unzip(path, dest, refused)
        grade.notices.extend(f"refused: {why}" for why in refused)
        return dest
    if grade.form == "bundle":
        status, _ = run_limited(["git", "clone", "-q", os.path.abspath(path), dest], 120, log)
        if status != 0:
            raise Rejected("the git bundle could not be cloned: " + tail(read_text(log), 5))
        if not [n for n in os.listdir(dest) if n != ".git"]:
            heads = subprocess.run(["git", "-C", dest, "for-each-ref", "--format=%(refname)",
                                    "refs/remotes"], capture_output=True, text=True).stdout.split()
            if heads:
                run_limited(["git", "-C", dest, "checkout", "-q", heads[0]], 60, log)
            else:
                # A bundle cut short clones as an empty repository.
                raise Rejected("the git bundle holds no commit (was it cut short? `git bundle "
                               "verify` it, or make it again with `git bundle create "
                               "work.bundle --all`)")
        return dest
    # A patch against the starter: write the starter, then apply it there.
    lab_regions.write_starter(root, grade.rubric.lab, dest)
    run_limited(["git", "init", "-q", dest], 60, log)
    status, _ = run_limited(["git", "apply", "--whitespace=nowarn", os.path.abspath(path)], 60,
                            log, cwd=dest)
    if status != 0:
        raise Rejected("the patch does not apply to the lab's starter (make it with "
                       "`git diff` in a tree from tools/mklab): " + tail(read_text(log), 8))
    return dest


def refused_entries(sub_dir: str, limit: int = 20) -> List[str]:
    """Links and special files anywhere in the submission folder @p sub_dir
    (never followed, never read), in words."""
    found: List[str] = []
    for base, dirs, files in os.walk(sub_dir):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(dirs + files):
            path = os.path.join(base, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            rel = os.path.relpath(path, sub_dir)
            if stat.S_ISLNK(st.st_mode) or not (stat.S_ISREG(st.st_mode) or
                                                stat.S_ISDIR(st.st_mode)):
                found.append(f"{rel} is {lab_safe.describe_mode(st.st_mode)}")
            elif stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                found.append(f"{rel} is a hard link")
            if len(found) >= limit:
                return found
    return found


def has_files(sub_dir: str) -> bool:
    """True when the submission folder holds any regular file (outside .git)."""
    for base, dirs, files in os.walk(sub_dir):
        dirs[:] = [d for d in dirs if d != ".git"]
        if any(os.path.isfile(os.path.join(base, f)) for f in files):
            return True
    return False


def read_student(path: str, sub_dir: str) -> Tuple[Optional[str], str]:
    """(the text of the student's file @p path, or None; why not), read
    without following links, refusing hard links, FIFOs and devices."""
    rel = os.path.relpath(path, sub_dir)
    try:
        data = lab_safe.read_regular(path, MAX_STUDENT_FILE + 1, top=sub_dir, what=rel)
    except lab_safe.Unsafe as e:
        return None, str(e)
    except OSError as e:
        return None, f"{rel} cannot be read: {e.strerror}"
    if len(data) > MAX_STUDENT_FILE:
        return None, f"{rel} is over the {MAX_STUDENT_FILE >> 20} MiB limit of a student file"
    return data.decode("utf-8", "replace"), ""


def locate(rel: str, sub_dir: str, all_student: Sequence[str]) -> Tuple[Optional[str], str]:
    """Where the student's @p rel is in @p sub_dir: (path, note). The file at
    its place wins; else a file of the same name at the top (a flat upload,
    when that name is unique among the student files) or at its place below
    one folder (a nested upload). path None with a note when it is unusable."""
    exact = os.path.join(sub_dir, rel)
    if os.path.lexists(exact):
        return exact, ""
    base = os.path.basename(rel)
    candidates = []
    flat = os.path.join(sub_dir, base)
    if sum(1 for f in all_student if os.path.basename(f) == base) == 1 and \
            os.path.lexists(flat):
        candidates.append((flat, f"{rel} was taken from {base} at the top of the submission "
                                 f"(uploaded without its folders)"))
    try:
        tops = sorted(os.listdir(sub_dir))
    except OSError:
        tops = []
    for top in tops:
        nested = os.path.join(sub_dir, top, rel)
        if top != ".git" and os.path.lexists(nested):
            candidates.append((nested, f"{rel} was taken from {top}/{rel} (the submission "
                                       f"is nested one folder deep)"))
    for path, note in candidates:
        return path, note
    return None, ""


def splice(rel: str, reference: str, submitted: str,
           regions: Sequence[lab_regions.Region]) -> Tuple[str, List[str]]:
    """The grader's @p reference text of @p rel with the bodies of @p regions
    (this lab's) taken from @p submitted, whose markers must match; every
    byte outside the bodies is the grader's. Returns (text, notes); a region
    whose markers the submission lost keeps the starter's stub."""
    notes: List[str] = []
    lab = regions[0].lab
    try:
        theirs = [r for r in lab_regions.parse_regions(rel, submitted) if r.lab == lab]
    except lab_regions.RegionError as e:
        theirs = []
        notes.append(f"the lab markers in {rel} are broken ({e})")
    ref_lines = reference.splitlines(keepends=True)
    sub_lines = submitted.splitlines(keepends=True)
    if theirs and len(theirs) != len(regions):
        notes.append(f"{rel} has {len(theirs)} lab {lab} region(s) where the starter has "
                     f"{len(regions)}")
        theirs = []
    if not theirs:
        notes.append(f"{rel}: no usable lab {lab} region (were the LAB markers removed?), so "
                     f"the starter's stub was graded there; only code between the markers "
                     f"counts")
        return lab_regions.stub_text(reference, list(regions)), notes
    out: List[str] = []
    outside_ref: List[str] = []
    outside_sub: List[str] = []
    cursor = sub_cursor = 0
    for mine, yours in zip(sorted(regions, key=lambda r: r.begin),
                           sorted(theirs, key=lambda r: r.begin)):
        out.extend(ref_lines[cursor:mine.hint_end])
        outside_ref.extend(ref_lines[cursor:mine.begin - 1])
        outside_sub.extend(sub_lines[sub_cursor:yours.begin - 1])
        body = sub_lines[yours.hint_end:yours.end - 1]
        if body and not body[-1].endswith("\n"):
            body[-1] += "\n"
        out.extend(body)
        out.append(ref_lines[mine.end - 1])
        cursor, sub_cursor = mine.end, yours.end
    out.extend(ref_lines[cursor:])
    outside_ref.extend(ref_lines[cursor:])
    outside_sub.extend(sub_lines[sub_cursor:])
    if [x.rstrip() for x in outside_ref] != [x.rstrip() for x in outside_sub]:
        notes.append(f"changes to {rel} outside its lab regions were ignored (the grader's "
                     f"own code was used there)")
    return "".join(out), notes


def assemble(grade: Any, root: str, files: Sequence[str], sub_dir: str, tree: str) -> None:
    """Writes the tree to grade at @p tree: the grader's checkout, in which
    each student file is the starter with the bodies of the lab's regions
    taken from the submission in @p sub_dir."""
    for rel in files:
        dest = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(os.path.join(root, rel), dest)
    student = set(grade.rubric.student_files)
    by_file: Dict[str, List[lab_regions.Region]] = {}
    for r in lab_regions.find_regions(root, [f for f in files if f in student]):
        if r.lab == grade.rubric.lab:
            by_file.setdefault(r.path, []).append(r)
    for why in refused_entries(sub_dir):
        grade.notices.append(f"refused: {why} (links and special files are never followed)")
    if not has_files(sub_dir):
        grade.empty = True
    for rel in grade.rubric.student_files:
        dest = os.path.join(tree, rel)
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            reference = f.read()
        src, note = locate(rel, sub_dir, grade.rubric.student_files)
        text, why = read_student(src, sub_dir) if src else (None, note)
        if text is not None and src:
            grade.taken.append(rel)
            grade.submitted[rel] = text
            if note:
                grade.notices.append(note)
            if rel in by_file:
                text, notes = splice(rel, reference, text, by_file[rel])
                grade.notices.extend(notes)
                if any("outside its lab regions" in n for n in notes):
                    grade.ignored.append(rel)
            grade.texts[rel] = text
            with open(dest, "w", encoding="utf-8") as f:
                f.write(text)
            continue
        grade.missing.append(rel)
        grade.notices.append((why or f"{rel} is not in the submission") +
                             "; the starter's version was graded instead")
        text = lab_regions.stub_text(reference, by_file[rel]) if rel in by_file else reference
        grade.texts[rel] = text
        with open(dest, "w", encoding="utf-8") as f:
            f.write(text)
    for rel in files:  # say which other changes were thrown away
        if rel in student:
            continue
        src = os.path.join(sub_dir, rel)
        if os.path.isfile(src) and not os.path.islink(src):
            try:
                with open(src, "rb") as a, open(os.path.join(root, rel), "rb") as b:
                    if a.read(MAX_STUDENT_FILE) != b.read(MAX_STUDENT_FILE):
                        grade.ignored.append(rel)
            except OSError:
                grade.ignored.append(rel)
