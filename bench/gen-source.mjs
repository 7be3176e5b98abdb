// Generates a realistic MHL source of about `lines` lines: agents, tools, prompts and a workflow
// whose steps use most statement and expression forms. Shared by the parse benchmark and tests.
export function generateSource(lines) {
  const out = [];
  let n = 0;
  while (out.length < lines) {
    out.push(
      `agent Worker${n} {`,
      '    command: "sh"',
      '    args: ["-c", "${prompt}"]',
      '    retry: { max_attempts: 3, delay: 2s }',
      '    after: (mcp, tools, result) -> { return result.trim() }',
      '}',
      `prompt Ask${n}(topic: string, depth: number = 2) {`,
      '    """',
      '    Explain ${topic} at depth ${depth}.',
      '    """',
      '}',
      `tool Helper${n} {`,
      '    total(items: number[]): number -> items.reduce((a, b) -> a + b, 0)',
      '    describe(x: object) -> { name: x.name, size: x.items?.size() ?? 0 }',
      '    check(v: string) -> {',
      '        if (v.is_empty()) { return false }',
      '        return v.starts_with("ok") && !v.contains("error")',
      '    }',
      '}',
      `workflow Flow${n} {`,
      '    description: "generated workflow"',
      '    input target: string = "."',
      '    input limit: number = 10',
      '    var summary = ""',
      '    var count = 0',
      '    step Prepare timeout 2m {',
      `        var r = cmd.exec(["git", "-C", target, "log", "--oneline"], timeout: 30s)`,
      '        var lines = r.stdout.split("\\n").filter((l) -> !l.is_empty())',
      '        for (var line in lines[..limit]) {',
      '            count += 1',
      '            summary += "${count}: ${line}\\n"',
      '        }',
      `        spawn h = Worker${n}.run(prompt: Ask${n}(topic: summary))`,
      '        wait h timeout: 90s',
      '    }',
      '    step Decide {',
      `        var score = match count { 0 -> "none"  1 -> "one"  _ -> "many" }`,
      `        if (Helper${n}.check(score)) goto Publish else goto Prepare`,
      '    }',
      '    step Publish {',
      '        try { fs.write(".mhl/out.txt", summary) } catch (e) { log.warn("write failed: ${e}") }',
      '        log("done", json.stringify({ count: count, score: if (count > 3) "high" else "low" }))',
      '    }',
      '}',
      '',
    );
    n++;
  }
  return out.join('\n');
}
