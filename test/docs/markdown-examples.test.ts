/**
 * The runnable-example markers of the docs (test/docs/markdown-examples.ts): which blocks are taken,
 * how the expectations read, and what counts as a failure.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkAnswers, countShellAndTsBlocks, extractExamples, parseExpectations } from "./markdown-examples.ts";

const DOC = [
  "# A page",
  "",
  "<!-- run: 201|200 GW_X id=7 data.ok=true ~hello; 404; out~done; exit=3 -->",
  "```sh",
  "curl -s http://localhost:$PORT/x",
  "```",
  "",
  "```sh",
  "npm start   # not marked",
  "```",
  "",
  "<!-- run -->",
  "```ts",
  'console.log("hi");',
  "```",
  "",
  "```json",
  '{ "not": "counted" }',
  "```",
].join("\n");

test("marked sh and ts blocks are extracted in order with their line and expectations; unmarked ones are counted", () => {
  const found = extractExamples("page.md", DOC);
  assert.equal(
    found.map((e) => [e.line, e.lang, e.code]),
    [
      [4, "sh", "curl -s http://localhost:$PORT/x\n"],
      [13, "ts", 'console.log("hi");\n'],
    ],
  );
  assert.equal(found[0]!.expect, {
    answers: [
      { status: "201|200", code: "GW_X", fields: [["id", "7"], ["data.ok", "true"]], contains: ["hello"] },
      { status: "404", code: null, fields: [], contains: [] },
    ],
    open: false,
    output: ["done"],
    exit: 3,
  });
  assert.equal(found[1]!.expect, { answers: [], open: false, output: [], exit: 0 });
  assert.is(countShellAndTsBlocks(DOC), 3);
});

test("a marker on a JSON block, or an unreadable expectation, is an error of the docs", () => {
  assert.throws(() => extractExamples("p.md", "<!-- run -->\n```json\n{}\n```\n"), /only sh and ts/);
  assert.throws(() => parseExpectations("200 what"), /unreadable expectation/);
});

test("answers are checked by status, code, fields and text; their count must match unless the list is open", () => {
  const e = parseExpectations("2xx GW_A n=1 ~abc; 409");
  const good = [
    { status: 201, body: '{"code":"GW_A","n":1,"t":"xabcx"}' },
    { status: 409, body: "{}" },
  ];
  assert.equal(checkAnswers(e, good, ""), []);
  const problems = checkAnswers(e, [{ status: 500, body: '{"code":"GW_B","n":2}' }], "");
  assert.equal(problems.length, 5, problems.join("\n"));
  assert.equal(checkAnswers(parseExpectations("200; ..."), [{ status: 200, body: "" }, { status: 500, body: "" }], ""), []);
  assert.is(checkAnswers(parseExpectations("200"), [...good], "").length, 2); // 201 ≠ 200, and one answer too many
});

test("with no answer expectations every answer must be 2xx; output expectations read the block's output", () => {
  assert.equal(checkAnswers(parseExpectations(""), [{ status: 204, body: "" }], ""), []);
  assert.is(checkAnswers(parseExpectations(""), [{ status: 401, body: "{}" }], "").length, 1);
  assert.equal(checkAnswers(parseExpectations("out~sha256:"), [], "sha256:abc\n"), []);
  assert.equal(checkAnswers(parseExpectations("out~sha256:"), [], "nothing"), ['output lacks "sha256:"']);
});

test.run();
