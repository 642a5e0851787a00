"""Write the synthetic harness outputs in datasets/examples/ (run by hand: python3
tests/make_examples.py).  Each file is laid out the way its harness writes it:

- lm-evaluation-harness: ``<output>/<model_name_sanitized>/samples_<task>_<date>.jsonl``
  (one line per document per filter: doc_id, doc, target, arguments, resps,
  filtered_resps, filter, metrics, doc_hash, prompt_hash, target_hash, then the metric
  values; ``json.dumps(..., ensure_ascii=False)``) and ``results_<date>.json``;
- Inspect AI: a ``.json`` log (version 2, eval, plan, results, stats, samples with
  ``scores.<scorer>.value`` of "C"/"I") and an ``.eval`` zip (header.json,
  samples/<id>_epoch_<n>.json, summaries.json, _journal/start.json);
- HELM: ``<suite>/<run spec>/per_instance_stats.json`` (instance_id,
  train_trial_index, perturbation, stats with name {name, split}) and run_spec.json.

The scores come from a seeded simulation: each item has a difficulty, each model an
ability, so the numbers are plausible and reproducible; nothing here is real model output.
"""

import hashlib
import json
import math
import os
import random
import shutil
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "datasets",
                    "examples")
NORMAL = random.Random(0)


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def correct(rng, ability, difficulty, noise=0.0):
    return int(ability - difficulty + noise * rng.gauss(0, 1) + rng.gauss(0, 1) > 0)


# --- lm-evaluation-harness --------------------------------------------------------------------

MMLU = ["abstract_algebra", "anatomy", "astronomy", "college_biology", "econometrics",
        "high_school_physics", "marketing", "virology"]
MODELS = {"acme/base-7b": 0.25, "acme/tuned-7b": 0.45}
DATES = {"acme/base-7b": "2025-06-01T10-12-44.512318", "acme/tuned-7b": "2025-06-03T09-40-07.004921"}


def lm_eval_sample(doc_id, doc, target, prompt, metrics, filter_key, kind):
    if kind == "generate_until":
        arguments = {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["Question:", "</s>"],
                                                              "do_sample": False}}}
        resps = [[doc["answer_text"]]]
        filtered = [doc["answer_text"].split("####")[-1].strip()]
    else:
        arguments = {f"gen_args_{i}": {"arg_0": prompt, "arg_1": f" {choice}"}
                     for i, choice in enumerate(doc["choices"])}
        logits = [[str(round(-NORMAL.uniform(0.5, 6), 4)), "False"] for _ in doc["choices"]]
        resps, filtered = [[l] for l in logits], logits
    sample = {"doc_id": doc_id, "doc": doc, "target": str(target), "arguments": arguments,
              "resps": resps, "filtered_resps": filtered, "filter": filter_key,
              "metrics": list(metrics), "doc_hash": sha(json.dumps(doc, indent=2,
                                                                    ensure_ascii=False)),
              "prompt_hash": sha(prompt), "target_hash": sha(str(target))}
    sample.update(metrics)
    return json.dumps(sample, ensure_ascii=False) + "\n"


def write_lm_eval():
    base = os.path.join(ROOT, "lm-eval")
    shutil.rmtree(base, ignore_errors=True)
    rng = random.Random(2025)
    difficulty = {task: [rng.gauss(0, 1) for _ in range(n)] for task, n in
                  [("gsm8k", 150), ("arc_easy", 200)] + [(f"mmlu_{s}", 30 + 5 * i)
                                                         for i, s in enumerate(MMLU)]}
    for model, ability in MODELS.items():
        folder = os.path.join(base, model.replace("/", "__"))
        os.makedirs(folder)
        date = DATES[model]
        results = {"results": {}, "model_name": model, "model_name_sanitized":
                   model.replace("/", "__"), "config": {"model": "hf", "model_args":
                                                        f"pretrained={model}"}, "date": 1}
        for task, levels in difficulty.items():
            if model == "acme/tuned-7b" and task == "mmlu_virology":
                continue                                  # a task this run did not include
            lines = []
            for doc_id, level in enumerate(levels):
                if task == "gsm8k":
                    doc = {"question": f"A farmer has {doc_id + 3} sheep ...",
                           "answer_text": f"... #### {doc_id + 7}"}
                    prompt = f"Question: {doc['question']}\nAnswer:"
                    strict = correct(rng, ability + 0.15, level)
                    flexible = max(strict, correct(rng, 0.4, level))
                    for key, value in (("strict-match", strict), ("flexible-extract", flexible)):
                        lines.append(lm_eval_sample(doc_id, doc, doc_id + 7, prompt,
                                                    {"exact_match": float(value)}, key,
                                                    "generate_until"))
                else:
                    doc = {"question": f"Which of these ... ({task} #{doc_id})?",
                           "choices": ["alpha", "beta", "gamma", "delta"], "answer": doc_id % 4}
                    prompt = f"Question: {doc['question']}\nAnswer:"
                    acc = correct(rng, ability, level)
                    norm = acc if rng.random() < 0.9 else 1 - acc
                    lines.append(lm_eval_sample(doc_id, doc, doc["answer"], prompt,
                                                {"acc": float(acc), "acc_norm": float(norm)},
                                                "none", "loglikelihood"))
            with open(os.path.join(folder, f"samples_{task}_{date}.jsonl"), "w",
                      encoding="utf-8") as handle:
                handle.writelines(lines)
        with open(os.path.join(folder, f"results_{date}.json"), "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2, ensure_ascii=False)


# --- Inspect AI --------------------------------------------------------------------------------

def inspect_log(model, ability, epochs, rng, levels, run_shift, task="arc_challenge"):
    samples = []
    for index, level in enumerate(levels, start=1):
        for epoch in range(1, epochs + 1):
            right = correct(rng, ability + run_shift[epoch - 1], level, noise=0.5)
            samples.append({
                "id": index, "epoch": epoch, "input": f"Question {index}: ...", "target": "B",
                "messages": [{"role": "user", "content": f"Question {index}: ..."},
                             {"role": "assistant", "content": "ANSWER: B" if right else
                              "ANSWER: C"}],
                "output": {"model": model, "choices": [{"message": {"role": "assistant",
                                                                     "content": "ANSWER: B"},
                                                        "stop_reason": "stop"}]},
                "scores": {"choice": {"value": "C" if right else "I",
                                      "answer": "B" if right else "C",
                                      "explanation": "ANSWER: B" if right else "ANSWER: C"}},
                "metadata": {}})
    accuracy = sum(s["scores"]["choice"]["value"] == "C" for s in samples) / len(samples)
    return {
        "version": 2, "status": "success",
        "eval": {"eval_id": sha(model + task)[:22], "run_id": sha(model + "run")[:22],
                 "created": "2025-06-05T14:03:11+00:00", "task": task,
                 "task_id": sha(task)[:22], "task_version": 0,
                 "dataset": {"name": task, "samples": len(levels)},
                 "model": model, "config": {"epochs": epochs}},
        "plan": {"name": "plan", "steps": [{"solver": "multiple_choice", "params": {}}]},
        "results": {"total_samples": len(samples), "completed_samples": len(samples),
                    "scores": [{"name": "choice", "scorer": "choice", "params": {},
                                "metrics": {"accuracy": {"name": "accuracy",
                                                         "value": accuracy}}}]},
        "stats": {"started_at": "2025-06-05T14:03:11+00:00",
                  "completed_at": "2025-06-05T14:09:52+00:00", "model_usage": {}},
        "samples": samples}


class FixedZip(zipfile.ZipFile):
    """A zip whose members carry one fixed date, so the example files (and the SHA-256 the
    reports print) are the same every time they are written."""

    def writestr(self, name, data, *args, **kwargs):
        info = zipfile.ZipInfo(name, date_time=(2025, 6, 5, 14, 3, 11))
        info.compress_type = zipfile.ZIP_DEFLATED
        super().writestr(info, data, *args, **kwargs)


def write_eval_zip(path, log):
    header = {key: value for key, value in log.items() if key != "samples"}
    with FixedZip(path, "w") as archive:
        archive.writestr("_journal/start.json", json.dumps(
            {"version": 2, "eval": log["eval"], "plan": log["plan"]}, indent=2))
        summaries = []
        for sample in log["samples"]:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json",
                             json.dumps(sample, indent=2))
            summaries.append({key: sample[key] for key in ("id", "epoch", "input", "target",
                                                            "scores")})
        archive.writestr("summaries.json", json.dumps(summaries, indent=2))
        archive.writestr("header.json", json.dumps(header, indent=2))


def write_inspect():
    """Two Inspect log folders (one per model, a log per task, 3 epochs), and the
    arc_challenge logs once more as .json documents."""
    folder = os.path.join(ROOT, "inspect")
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(7)
    tasks = {"arc_challenge": [rng.gauss(0, 1) for _ in range(120)],
             "gpqa_diamond": [rng.gauss(0.8, 1) for _ in range(60)]}
    for name, model, ability, shifts in (("base", "openai/acme-base", 0.2, (0.05, -0.1, 0.0)),
                                         ("tuned", "openai/acme-tuned", 0.5, (0.25, -0.2, 0.1))):
        os.makedirs(os.path.join(folder, name))
        for task, levels in tasks.items():
            log = inspect_log(model, ability, 3, rng, levels, shifts, task)
            stem = f"2025-06-05T14-03-11+00-00_{task.replace('_', '-')}_{sha(model + task)[:22]}"
            write_eval_zip(os.path.join(folder, name, stem + ".eval"), log)
            if task == "arc_challenge":
                os.makedirs(os.path.join(folder, "json"), exist_ok=True)
                with open(os.path.join(folder, "json", f"{name}.json"), "w",
                          encoding="utf-8") as handle:
                    json.dump(log, handle, indent=2)


# --- HELM -----------------------------------------------------------------------------------

def helm_stats(rng, ability, levels, trials):
    records = []
    for index, level in enumerate(levels):
        for trial in range(trials):
            value = float(correct(rng, ability + 0.15 * rng.gauss(0, 1), level, noise=0.4))
            stats = [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": value,
                      "sum_squared": value, "min": value, "max": value, "mean": value,
                      "variance": 0.0, "stddev": 0.0},
                     {"name": {"name": "num_prompt_tokens", "split": "test"}, "count": 1,
                      "sum": 412.0, "sum_squared": 169744.0, "min": 412.0, "max": 412.0,
                      "mean": 412.0, "variance": 0.0, "stddev": 0.0}]
            records.append({"instance_id": f"id{4000 + index}", "train_trial_index": trial,
                            "stats": stats})
            perturbed = float(correct(rng, ability - 0.3, level))
            records.append({"instance_id": f"id{4000 + index}", "train_trial_index": trial,
                            "perturbation": {"name": "robustness", "robustness": True,
                                             "fairness": False, "computed_on": "perturbed"},
                            "stats": [{"name": {"name": "exact_match", "split": "test",
                                                "perturbation": {"name": "robustness",
                                                                 "robustness": True,
                                                                 "fairness": False,
                                                                 "computed_on": "perturbed"}},
                                       "count": 1, "sum": perturbed, "sum_squared": perturbed,
                                       "min": perturbed, "max": perturbed, "mean": perturbed,
                                       "variance": 0.0, "stddev": 0.0}]})
    return records


def write_helm():
    folder = os.path.join(ROOT, "helm")
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(11)
    levels = [rng.gauss(0, 1) for _ in range(100)]
    for model, ability in (("acme/base-7b", 0.1), ("acme/tuned-7b", 0.45)):
        run = f"mmlu:subject=anatomy,method=multiple_choice_joint,model={model.replace('/', '_')}"
        path = os.path.join(folder, run)
        os.makedirs(path)
        with open(os.path.join(path, "per_instance_stats.json"), "w") as handle:
            json.dump(helm_stats(rng, ability, levels, 3), handle, indent=2)
        with open(os.path.join(path, "run_spec.json"), "w") as handle:
            json.dump({"name": run, "adapter_spec": {"method": "multiple_choice_joint",
                                                     "model": model, "num_train_trials": 3}},
                      handle, indent=2)


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


if __name__ == "__main__":
    write_xlsx()
    write_lm_eval()
    write_inspect()
    write_helm()
    write_seeds()
    print("written under", ROOT)
