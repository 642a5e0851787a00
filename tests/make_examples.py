"""Write the synthetic examples in datasets/examples/ that are not harness logs (run by hand:
python3 tests/make_examples.py): five seeds per system as a long CSV, an Excel workbook, a
leaderboard of ten systems on one test set, two systems on topics of which one regressed,
predictions of a classifier, and an arena of battles.

The harness logs beside them (lm-eval/, inspect/, helm/) are not written here: they are real
output of lm-evaluation-harness, Inspect AI and HELM, run offline with mock models by the
scripts in tests/fixtures/ (with the versions they used and their truth.json).
"""

import json
import math
import os
import random
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "datasets",
                    "examples")


class FixedZip(zipfile.ZipFile):
    """A zip whose members carry one fixed date, so the example files (and the SHA-256 the
    reports print) are the same every time they are written."""

    def writestr(self, name, data, *args, **kwargs):
        info = zipfile.ZipInfo(name, date_time=(2025, 6, 5, 14, 3, 11))
        info.compress_type = zipfile.ZIP_DEFLATED
        super().writestr(info, data, *args, **kwargs)


def correct(rng, ability, difficulty, noise=0.0):
    return int(ability - difficulty + noise * rng.gauss(0, 1) + rng.gauss(0, 1) > 0)


# --- several seeds per system, a long CSV -----------------------------------------------------

def write_seeds():
    """Five training seeds per system, 400 items: a seed shifts the system's ability."""
    rng = random.Random(12)
    levels = [rng.gauss(0, 1) for _ in range(400)]
    rows = ["item,seed,baseline,candidate"]
    shifts = {name: [rng.gauss(0, 0.12) for _ in range(5)] for name in ("baseline", "candidate")}
    for seed in range(5):
        for item, level in enumerate(levels):
            base = correct(rng, 0.3 + shifts["baseline"][seed], level, noise=0.4)
            cand = correct(rng, 0.38 + shifts["candidate"][seed], level, noise=0.4)
            rows.append(f"{item},{seed},{base},{cand}")
    with open(os.path.join(ROOT, "seeds.csv"), "w") as handle:
        handle.write("\n".join(rows) + "\n")


def write_xlsx():
    """A spreadsheet as people keep one: a header row, the question, the two models'
    correctness as 1/0 (numbers) and a reviewer's comment column, first sheet."""
    rng = random.Random(31)
    rows = [["question", "topic", "gpt_base", "gpt_tuned", "comment"]]
    for number in range(1, 181):
        level = rng.gauss(0, 1)
        base = correct(rng, 0.5, level, noise=0.5)
        tuned = correct(rng, 0.85, level, noise=0.5)
        rows.append([f"Q{number:03d}", ("math", "law", "code")[number % 3], base, tuned,
                     "checked" if number % 7 == 0 else ""])
    with FixedZip(os.path.join(ROOT, "review.xlsx"), "w") as archive:
        for name, data in xlsx_parts(rows).items():
            archive.writestr(name, data)


def xlsx_parts(rows):
    """The parts of a minimal Excel workbook: first sheet, shared strings, numbers."""
    strings, cells = [], []
    for r, row in enumerate(rows, start=1):
        parts = []
        for c, value in enumerate(row):
            ref = f"{chr(65 + c)}{r}"
            if value == "":
                continue
            if isinstance(value, str):
                strings.append(value)
                parts.append(f'<c r="{ref}" t="s"><v>{len(strings) - 1}</v></c>')
            else:
                parts.append(f'<c r="{ref}"><v>{value}</v></c>')
        cells.append(f'<row r="{r}">{"".join(parts)}</row>')
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    return {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                               'content-types"/>',
        "xl/workbook.xml": f'<workbook {ns} {rel}><sheets><sheet name="review" sheetId="1" '
                           'r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels":
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            'relationships"><Relationship Id="rId1" Target="worksheets/sheet1.xml" '
            'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'worksheet"/></Relationships>',
        "xl/sharedStrings.xml": f'<sst {ns}>' + "".join(f"<si><t>{s}</t></si>"
                                                       for s in strings) + "</sst>",
        "xl/worksheets/sheet1.xml": f'<worksheet {ns}><sheetData>{"".join(cells)}'
                                    '</sheetData></worksheet>',
    }


# --- a leaderboard: ten systems on the same 1,000 items -----------------------------------------

LEADERBOARD = [("baseline", 0.0), ("sft", 0.25), ("sft-long", 0.3), ("dpo", 0.45),
               ("dpo-beta", 0.47), ("rag", 0.5), ("rag-rerank", 0.62), ("distill", 0.2),
               ("merge", 0.46), ("cot", 0.75)]


def write_leaderboard():
    """Ten systems, 0/1 on 1,000 questions, sharing each question's difficulty: some close
    enough that no test set of this size can order them, some clearly apart."""
    rng = random.Random(44)
    rows = ["question," + ",".join(name for name, _ in LEADERBOARD)]
    for number in range(1, 1001):
        level = rng.gauss(0, 1)
        rows.append(f"q{number:04d}," + ",".join(str(correct(rng, ability, level, noise=0.6))
                                                 for _, ability in LEADERBOARD))
    with open(os.path.join(ROOT, "leaderboard.csv"), "w") as handle:
        handle.write("\n".join(rows) + "\n")


def write_topics():
    """Seven topics of 300 items where the tuned system gains 6 points, geo (80 items) where
    it loses 25, tiny (6 items): about +5 points overall.  Each topic's items in the four
    cells of its 2x2 table (both right, base only, tuned only, neither), in that order."""
    rows, item = ["item,topic,base,tuned"], 0
    cells = [(topic, (190, 20, 38, 52)) for topic in
             ("math", "code", "law", "bio", "chem", "art", "news")]
    for topic, counts in cells + [("geo", (32, 24, 4, 20)), ("tiny", (2, 1, 2, 1))]:
        for (a, b), count in zip(((1, 1), (1, 0), (0, 1), (0, 0)), counts):
            for _ in range(count):
                rows.append(f"{item},{topic},{a},{b}")
                item += 1
    with open(os.path.join(ROOT, "topics.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")


def write_battles():
    """An arena of ten systems judged head to head, as FastChat's battle records (JSON lines):
    1,500 prompts, each judged once or twice (the second turn in the other order); true
    ratings on the log-odds scale, ties by Davidson's model (nu = 0.6)."""
    rng = random.Random(31)
    names = [name for name, _ in LEADERBOARD]
    rating = {name: 2.2 * ability for name, ability in LEADERBOARD}
    rows = []
    for prompt in range(1, 1501):
        first, second = rng.sample(names, 2)
        for turn in range(1, 2 + (rng.random() < 0.4)):
            a, b = (first, second) if turn == 1 else (second, first)
            pa, pb = math.exp(rating[a]), math.exp(rating[b])
            u = rng.random() * (pa + pb + 0.6 * math.sqrt(pa * pb))
            winner = "model_a" if u < pa else "model_b" if u < pa + pb else rng.choice(
                ["tie", "tie (bothbad)"])
            rows.append(json.dumps({"question_id": f"p{prompt:04d}", "turn": turn,
                                    "model_a": a, "model_b": b, "winner": winner}))
    with open(os.path.join(ROOT, "battles.jsonl"), "w") as f:
        f.write("\n".join(rows) + "\n")


def write_head_to_head():
    """Base and tuned judged on 500 prompts, each in both orders (FastChat's battle records,
    JSON lines): tuned wins 45% of the judgments and ties 20%, and the answer shown first
    is favoured a little (a judge's position bias)."""
    rng = random.Random(32)
    rows = []
    for prompt in range(1, 501):
        for a, b in (("base", "tuned"), ("tuned", "base")):
            u = rng.random() + (0.04 if a == "tuned" else -0.04)
            tuned = "won" if u > 0.55 else "tie" if u > 0.35 else "lost"
            winner = "tie" if tuned == "tie" else "model_a" if (tuned == "won") == (
                a == "tuned") else "model_b"
            rows.append(json.dumps({"question_id": prompt, "model_a": a, "model_b": b,
                                    "winner": winner}))
    with open(os.path.join(ROOT, "head-to-head.jsonl"), "w") as f:
        f.write("\n".join(rows) + "\n")


def write_judged():
    """2,000 answers of base and tuned graded by an LLM judge, 250 of them also by people:
    people find base right 70% and tuned 74% of the time; the judge agrees with them 85%
    of the time and passes a fifth of tuned's failures (a bias of about +5 points)."""
    rng = random.Random(33)
    rows = ["item,base.judge,base.human,tuned.judge,tuned.human"]
    for item in range(2000):
        base, tuned = int(rng.random() < 0.70), int(rng.random() < 0.74)
        judge_base = base if rng.random() < 0.85 else 1 - base
        judge_tuned = tuned if rng.random() < 0.85 else 1 - tuned
        judge_tuned = 1 if judge_tuned == 0 and rng.random() < 0.2 else judge_tuned
        human = item % 8 == 0
        rows.append(f"q{item:04d},{judge_base},{base if human else ''},{judge_tuned},"
                    f"{tuned if human else ''}")
    with open(os.path.join(ROOT, "judged.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")


def write_predictions():
    """1,200 items labelled in five intent classes, with a rare one (refund, about 60 items)
    that the tuned classifier gets right far less often while it gains on the others."""
    rng = random.Random(30)
    classes = ["billing", "login", "shipping", "other", "refund"]
    rows = ["item,label,base,tuned"]
    for item in range(1200):
        label = rng.choices(classes, [25, 25, 25, 20, 5])[0]
        base = label if rng.random() < 0.8 else rng.choice(classes)
        right = 0.35 if label == "refund" else 0.88
        tuned = label if rng.random() < right else rng.choice(
            classes[:4] if label == "refund" else classes)
        rows.append(f"{item},{label},{base},{tuned}")
    with open(os.path.join(ROOT, "predictions.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    write_xlsx()
    write_seeds()
    write_leaderboard()
    write_topics()
    write_predictions()
    write_battles()
    write_head_to_head()
    write_judged()
    print("written under", ROOT)
