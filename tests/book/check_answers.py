#!/usr/bin/python3
"""No chapter of the book answers a graded lab question.

    check_answers.py               compare every reference answer with the chapters
    check_answers.py --self-test   plant a chapter that paraphrases an answer
                                   closely: it must be found, the real chapters not
    check_answers.py --scores      print each answer's closest sentence match
    check_answers.py HTML_DIR      the same comparison, also over the built
                                   chapters (the excerpts' lab hints included)

A lab's written questions are graded by hand against the reference answers
of its worksheet (labs/<lab>/results.toml, [answers]). A chapter the
handout sends the student to read first must not hold those answers, or the
grader marks reading rather than reasoning.

Two comparisons, both of conclusions rather than topics (a chapter
necessarily shares words with the lab it prepares: CR3, trap, promotion):

* the answer in the same words: both texts are reduced to their content
  words (lower case, a crude stem, no stop words), and an answer sentence of
  at least MIN_PAIRS consecutive content-word pairs counts as given away when
  one paragraph of a chapter holds SENTENCE_SHARE of them;
* the answer in other words: book/instructor/answer-claims.toml lists, per
  graded question, patterns for the conclusions its answer rests on ("the
  allocator is the larger share", "the INT, a CLI, the IRET and the HLT");
  a chapter paragraph matching one gives that conclusion away. Every graded
  question must have its entry there.
"""

import os
import re
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHAPTERS = os.path.join(ROOT, "book", "chapters")
LABS = os.path.join(ROOT, "labs")

SENTENCE_SHARE = 0.8
MIN_PAIRS = 8
# The conclusions each graded answer rests on, as patterns (instructor-only:
# they summarise the answers). A chapter paragraph that matches one states
# the conclusion the student is graded for reaching.
CLAIMS = os.path.join(ROOT, "book", "instructor", "answer-claims.toml")

STOP = set("""a an the and or but if of to in on at by for with from as is are was were be been
being it its this that these those which who whom whose what when where why how than then there
here so such not no nor do does did done has have had having can could may might must shall should
will would one two three four each every all any both either neither more most less least other
another same own only also just very too into onto out over under up down about above below
between through during before after again further once per via i we you they he she them his her
our your their my me us itself themselves yes s t""".split())


def stem(word):
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text):
    text = re.sub(r":\w+:`([^`<]*)[^`]*`", r" \1 ", text)  # a role's shown text
    words = re.findall(r"[a-z][a-z0-9_.]*[a-z0-9]|[a-z]", text.lower())
    return [stem(w) for w in words if w not in STOP]


def pairs(words):
    return {(a, b) for a, b in zip(words, words[1:])}


def sentences(text):
    return [s for s in re.split(r"(?<=[.;:?!])\s+", " ".join(text.split())) if s]


def paragraphs(text):
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def reference_answers():
    found = {}
    for lab in sorted(os.listdir(LABS)):
        path = os.path.join(LABS, lab, "results.toml")
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            answers = tomllib.load(f).get("answers", {})
        for key, text in answers.items():
            if isinstance(text, str) and text.strip():
                found[f"{lab}.{key}"] = text
    return found


def html_chapters(html_dir):
    """The built chapters' text, excerpts and their lab hints included: one
    paragraph per <p>, <pre> or <li>."""
    import html as html_lib
    out = {}
    folder = os.path.join(html_dir, "chapters")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".html"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            text = re.sub(r"</(p|pre|li|dd|dt|h\d)>", "\n\n", text)
            out[name] = html_lib.unescape(re.sub(r"<[^>]+>", "", text))
    return out


def chapters(folder=CHAPTERS):
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".rst"):
            with open(os.path.join(folder, name)) as f:
                out[name] = f.read()
    return out


def load_claims(path=CLAIMS):
    with open(path, "rb") as f:
        return {key: entry.get("patterns", []) for key, entry in tomllib.load(f).items()}


def compare(answers, pages, claims=None):
    """(problems, scores): the answers a chapter gives away, and every best match."""
    problems, scores = [], []
    claims = {} if claims is None else claims
    page_pairs = {name: [pairs(content_words(p)) for p in paragraphs(text)]
                  for name, text in pages.items()}
    for key, answer in sorted(answers.items()):
        for pattern in claims.get(key, []):
            for name, text in pages.items():
                for para in paragraphs(text):
                    flat = " ".join(para.split())
                    m = re.search(pattern, flat, re.I)
                    if m:
                        problems.append(f"{name} gives away {key}: it concludes "
                                        f"'{m.group(0)[:80]}' (answer-claims.toml)")
        for sentence in sentences(answer):
            mine = pairs(content_words(sentence))
            if len(mine) < MIN_PAIRS:
                continue
            best = (0.0, None)
            for name, paras in page_pairs.items():
                for para in paras:
                    share = len(mine & para) / len(mine)
                    if share > best[0]:
                        best = (share, name)
            scores.append((best[0], key, best[1], sentence))
            if best[0] >= SENTENCE_SHARE:
                problems.append(f"{best[1]} gives away {key}: a paragraph holds {best[0]:.0%} of "
                                f"the answer's sentence '{sentence[:90]}'")
    return problems, scores


# A made-up question for the self-test of the claims: the real conclusions
# must not be written in a file that every starter tree holds.
FAKE_KEY = "lab-fake.why"
FAKE_ANSWER = ("The frobnicator dominates the cost, because every request walks the whole "
               "list of handlers before the widget cache answers it.")
FAKE_CLAIMS = {FAKE_KEY: ["frobnicator (dominates|is the larger share)"]}
FAKE_CHAPTER = ("Here the frobnicator is the larger share of the work: each request walks "
                "the handlers.")
FAKE_TOPIC = "The frobnicator and the widget cache both take part; measure which costs more."


def self_test():
    failed = 0
    # The answer in the same words: a chapter that copies two sentences of a
    # real reference answer (built here, never stored in this file).
    answers = reference_answers()
    key, answer = sorted(answers.items())[0]
    long_sentences = [x for x in sentences(answer) if len(pairs(content_words(x))) >= MIN_PAIRS]
    planted = "A chapter that copies an answer\n\n" + " ".join(long_sentences[:2]) + "\n"
    problems, _ = compare({key: answer}, {"planted.rst": planted})
    if not any(p.startswith(f"planted.rst gives away {key}") for p in problems):
        print(f"FAIL: the planted copy of the reference answer {key} was not found")
        failed += 1
    # The answer in other words: a conclusion that answer-claims.toml names.
    problems, _ = compare({FAKE_KEY: FAKE_ANSWER}, {"other.rst": FAKE_CHAPTER}, FAKE_CLAIMS)
    if not any(p.startswith(f"other.rst gives away {FAKE_KEY}") for p in problems):
        print("FAIL: the planted conclusion in other words was not found")
        failed += 1
    # A chapter that only names the subject passes.
    problems, _ = compare({FAKE_KEY: FAKE_ANSWER}, {"topic.rst": FAKE_TOPIC}, FAKE_CLAIMS)
    if problems:
        print("FAIL: a chapter that only names the subject was refused: " + problems[0])
        failed += 1
    if failed:
        return 1
    print("OK: the planted copy and the planted conclusion of a reference answer are found; "
          "naming the topic is not")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    answers = reference_answers()
    if not answers:
        print("FAIL: no reference answers found in labs/*/results.toml")
        return 1
    if not os.path.exists(CLAIMS):
        print(f"FAIL: {os.path.relpath(CLAIMS, ROOT)} is missing (the instructor's tree has it)")
        return 1
    claims = load_claims()
    unlisted = sorted(set(answers) - set(claims))
    if unlisted:
        print("FAIL: graded questions without an entry in answer-claims.toml: "
              + ", ".join(unlisted))
        return 1
    pages = chapters()
    args = [a for a in argv if a != "--scores"]
    if args:
        pages.update(html_chapters(args[0]))
    problems, scores = compare(answers, pages, claims)
    if "--scores" in argv:
        for share, key, name, sentence in sorted(scores, reverse=True)[:25]:
            print(f"{share:.2f} {key} {name}: {sentence[:100]}")
        return 0
    for p in problems:
        print(f"FAIL {p}")
    if problems:
        print(f"FAILED: the chapters answer {len({p.split()[3] for p in problems})} graded "
              "question(s); say what to look at, and leave the reasoning to the student")
        return 1
    print(f"OK: no chapter gives away any of the {len(answers)} graded written answers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
