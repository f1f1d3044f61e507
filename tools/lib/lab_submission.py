"""Taking in a submission: what form it has (a folder, a git bundle, a .zip,
a patch against the starter), unpacking it into a folder, finding each
student file in it (at its place, or uploaded flat or one folder deep), and
assembling the tree to grade: the grader's own checkout with only the
rubric's student files taken from the submission. lab_grade builds and
judges that tree.
"""

import os
import shutil
import subprocess
import time

from . import lab_regions, process

MAX_STUDENT_FILE = 4 << 20  # bytes; a larger "source file" is refused
OUTPUT_TAIL_LINES = 40
OUTPUT_TAIL_CHARS = 6000


class Rejected(Exception):
    """The submission cannot be read (a patch that does not apply, a bad bundle)."""


def _clean_env():
    env = dict(os.environ)
    for key in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CMAKE_BUILD_PARALLEL_LEVEL", "DESTDIR"):
        env.pop(key, None)
    return env


def run_limited(cmd, timeout, log_path, cwd=None, env=None):
    """Runs @p cmd with stdout and stderr to @p log_path, killing its whole
    process group after @p timeout seconds. Returns (status or None on timeout, seconds)."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        # Leaving the block kills the group: also any child left behind.
        with process.Group(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd,
                           env=env or _clean_env()) as child:
            status = child.wait(timeout=timeout)
    return status, time.monotonic() - start


def read_text(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def tail(text, lines=OUTPUT_TAIL_LINES, chars=OUTPUT_TAIL_CHARS):
    kept = text.replace("\r", "").splitlines()[-lines:]
    out = "\n".join(kept)
    return out[-chars:]


MAX_ZIP_TOTAL = 64 << 20   # bytes a .zip may unpack to
MAX_ZIP_MEMBERS = 20000


def submission_form(path):
    if os.path.isdir(path):
        return "tree"
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith((b"# v2 git bundle", b"# v3 git bundle")):
        return "bundle"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if path.endswith((".patch", ".diff")) or head.startswith((b"diff ", b"--- ", b"From ")):
        return "patch"
    return "unknown"


def unzip(path, dest):
    """Unpacks the .zip at @p path into @p dest: regular files only, no path
    leaving @p dest, at most MAX_ZIP_TOTAL bytes. Raises Rejected."""
    import zipfile
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if len(members) > MAX_ZIP_MEMBERS:
                raise Rejected(f"the .zip holds {len(members)} files, more than {MAX_ZIP_MEMBERS}")
            total = 0
            for m in members:
                name = m.filename
                mode = (m.external_attr >> 16) & 0o170000
                if m.is_dir() or mode == 0o120000:  # folders; symbolic links are never followed
                    continue
                parts = name.replace("\\", "/").split("/")
                if name.startswith("/") or ".." in parts:
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


def unpack(grade, root, scratch):
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
        unzip(path, dest)
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


def _regular_inside(path, top):
    """True when @p path is a regular file (no link on the way) inside @p top."""
    return (os.path.realpath(path).startswith(os.path.realpath(top) + os.sep)
            and os.path.isfile(path) and not os.path.islink(path))


def locate(rel, sub_dir, all_student):
    """Where the student's @p rel is in @p sub_dir: (path, note). The file at
    its place wins; else a file of the same name at the top (a flat upload,
    when that name is unique among the student files) or at its place below
    one folder (a nested upload). path None with a note when it is unusable."""
    exact = os.path.join(sub_dir, rel)
    if os.path.lexists(exact):
        if os.path.islink(exact) or not _regular_inside(exact, sub_dir):
            return None, f"{rel} is a symbolic link (or lies under one), which is never followed"
        size = os.path.getsize(exact)
        if size > MAX_STUDENT_FILE:
            return None, (f"{rel} is {size} bytes, over the {MAX_STUDENT_FILE >> 20} MiB limit "
                          f"of a student file")
        return exact, ""
    base = os.path.basename(rel)
    candidates = []
    flat = os.path.join(sub_dir, base)
    if sum(1 for f in all_student if os.path.basename(f) == base) == 1 and os.path.isfile(flat):
        candidates.append((flat, f"{rel} was taken from {base} at the top of the submission "
                                 f"(uploaded without its folders)"))
    try:
        tops = sorted(os.listdir(sub_dir))
    except OSError:
        tops = []
    for top in tops:
        nested = os.path.join(sub_dir, top, rel)
        if top != ".git" and os.path.isfile(nested):
            candidates.append((nested, f"{rel} was taken from {top}/{rel} (the submission "
                                       f"is nested one folder deep)"))
    for path, note in candidates:
        if not _regular_inside(path, sub_dir):
            return None, f"{os.path.relpath(path, sub_dir)} is a symbolic link, never followed"
        if os.path.getsize(path) > MAX_STUDENT_FILE:
            return None, f"{os.path.relpath(path, sub_dir)} is over the size limit of a student file"
        return path, note
    return None, ""


def assemble(grade, root, files, sub_dir, tree):
    """Copies the grader's checkout to @p tree, then the student files from @p sub_dir."""
    for rel in files:
        dest = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(os.path.join(root, rel), dest)
    student = set(grade.rubric.student_files)
    lab_regions_by_file = {}
    for r in lab_regions.find_regions(root, [f for f in files if f in student]):
        if r.lab == grade.rubric.lab:
            lab_regions_by_file.setdefault(r.path, []).append(r)
    for rel in grade.rubric.student_files:
        dest = os.path.join(tree, rel)
        src, note = locate(rel, sub_dir, grade.rubric.student_files)
        if src:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(src, dest)
            grade.taken.append(rel)
            if note:
                grade.notices.append(note)
            continue
        grade.missing.append(rel)
        grade.notices.append((note or f"{rel} is not in the submission") +
                             "; the starter's version was graded instead")
        if rel in lab_regions_by_file:  # what the student started from
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = lab_regions.stub_text(f.read(), lab_regions_by_file[rel])
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
