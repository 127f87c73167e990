/**
 * Runnable examples of the documentation. A fenced `sh` or `ts` block is runnable when the line just
 * above its fence is an HTML comment `<!-- run -->` or `<!-- run: EXPECTATIONS -->` (invisible on
 * GitHub, readable in the source). EXPECTATIONS, separated by `;`, are checked in order against the
 * HTTP answers the block's `curl` commands received, one item per answer:
 *
 *   201 GW_SOME_CODE status=signed ~text     status (`2xx`, `201|200`, `*` = any), then optional
 *                                            problem `code`, JSON fields (dotted path = value as
 *                                            text) and `~text` the body contains
 *   out~text                                 the block's output contains text (not an answer)
 *   exit=N                                   the block ends with status N (default 0)
 *
 * With no item naming an answer, every answer must be 2xx; with items, their count must equal the
 * answers (a last item `...` allows more, unchecked).
 */

export interface Example {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: "sh" | "ts";
  code: string;
  expect: Expectations;
}

export interface AnswerCheck {
  status: string;
  code: string | null;
  fields: Array<[path: string, value: string]>;
  contains: string[];
}

export interface Expectations {
  answers: AnswerCheck[];
  /** More answers than items are allowed (a last item `...`). */
  open: boolean;
  output: string[];
  exit: number;
}

export interface RecordedAnswer {
  status: number;
  body: string;
}

const MARK = /^<!--\s*run(?::\s*([\s\S]*?))?\s*-->\s*$/;
const FENCE = /^```(\w+)?/;

/** Every marked block of one Markdown text, in document order. */
export function extractExamples(file: string, markdown: string): Example[] {
  const lines = markdown.split("\n");
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    if (end < 0) throw new Error(`${file}:${i + 1}: unclosed code fence`);
    const mark = i > 0 ? MARK.exec(lines[i - 1]!) : null;
    if (mark) {
      const lang = _lang(fence[1]);
      if (!lang) throw new Error(`${file}:${i + 1}: only sh and ts blocks can be marked runnable`);
      out.push({ file, line: i + 1, lang, code: lines.slice(i + 1, end).join("\n") + "\n", expect: parseExpectations(mark[1] ?? "") });
    }
    i = end;
  }
  return out;
}

/** How many fenced sh/ts blocks a Markdown text has, marked or not (the report's denominator). */
export function countShellAndTsBlocks(markdown: string): number {
  let n = 0;
  let open = false;
  for (const line of markdown.split("\n")) {
    if (!line.startsWith("```")) continue;
    if (!open && _lang(FENCE.exec(line)?.[1])) n++;
    open = !open;
  }
  return n;
}

export function parseExpectations(text: string): Expectations {
  const e: Expectations = { answers: [], open: false, output: [], exit: 0 };
  for (const item of text.split(";").map((s) => s.trim()).filter(Boolean)) {
    if (item === "...") e.open = true;
    else if (item.startsWith("out~")) e.output.push(item.slice(4));
    else if (/^exit=\d+$/.test(item)) e.exit = Number(item.slice(5));
    else e.answers.push(_answerCheck(item));
  }
  return e;
}

/** Problems of the recorded answers against the expectations (empty: all good). */
export function checkAnswers(e: Expectations, answers: RecordedAnswer[], output: string): string[] {
  const problems: string[] = [];
  if (e.answers.length === 0) {
    answers.forEach((a, i) => a.status >= 200 && a.status < 300 ? null : problems.push(`answer ${i + 1}: HTTP ${a.status} (no expectation: 2xx wanted) ${a.body.slice(0, 300)}`));
  } else {
    if (answers.length < e.answers.length || (!e.open && answers.length > e.answers.length))
      problems.push(`${answers.length} answers, ${e.answers.length} expected`);
    e.answers.forEach((c, i) => {
      const a = answers[i];
      if (a) problems.push(..._checkOne(c, a).map((p) => `answer ${i + 1}: ${p} — ${a.body.slice(0, 300)}`));
    });
  }
  for (const text of e.output) if (!output.includes(text)) problems.push(`output lacks "${text}"`);
  return problems;
}

// --- Internal helpers ---

function _lang(info: string | undefined): "sh" | "ts" | null {
  if (info === "sh" || info === "bash" || info === "shell") return "sh";
  if (info === "ts" || info === "typescript") return "ts";
  return null;
}

function _answerCheck(item: string): AnswerCheck {
  const [status, ...rest] = item.split(/\s+/);
  const c: AnswerCheck = { status: status!, code: null, fields: [], contains: [] };
  for (const t of rest) {
    if (t.startsWith("~")) c.contains.push(t.slice(1));
    else if (/^GW_[A-Z0-9_]+$/.test(t)) c.code = t;
    else if (t.includes("=")) c.fields.push([t.slice(0, t.indexOf("=")), t.slice(t.indexOf("=") + 1)]);
    else throw new Error(`unreadable expectation "${t}" in "${item}"`);
  }
  return c;
}

function _checkOne(c: AnswerCheck, a: RecordedAnswer): string[] {
  const problems: string[] = [];
  if (!_statusMatches(c.status, a.status)) problems.push(`HTTP ${a.status}, ${c.status} expected`);
  const body = _json(a.body);
  if (c.code !== null && _field(body, "code") !== c.code) problems.push(`code ${String(_field(body, "code"))}, ${c.code} expected`);
  for (const [path, value] of c.fields) {
    const got = _field(body, path);
    if (String(got) !== value) problems.push(`${path} = ${JSON.stringify(got)}, ${value} expected`);
  }
  for (const text of c.contains) if (!a.body.includes(text)) problems.push(`body lacks "${text}"`);
  return problems;
}

function _statusMatches(spec: string, status: number): boolean {
  return spec.split("|").some((s) => s === "*" || s === String(status) || (/^\dxx$/.test(s) && Math.floor(status / 100) === Number(s[0])));
}

function _json(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function _field(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}
