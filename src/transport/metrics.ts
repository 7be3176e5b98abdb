/**
 * The counters behind `GET /metrics`, in the Prometheus text format: MCP requests' latency as a
 * histogram, tool calls by outcome, and active legacy sessions. Updated by the HTTP transport and
 * the tool surface, read by the ops endpoint; no library, since the format is a few lines.
 */

/** Upper bounds (seconds) of the latency buckets. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** How a tool call ended: `input_required` is a paused workflow asking the client for inputs. */
export type CallOutcome = 'success' | 'error' | 'invalid' | 'input_required';

/**
 * A metric another part of the server owns, read when `/metrics` is scraped: one value, or one
 * value per label value (rendered as `name{label="value"}`).
 */
export interface MetricFamily {
  readonly name: string;
  readonly type: 'gauge' | 'counter';
  readonly help: string;
  readonly label?: string;
  readonly read: () => number | Readonly<Record<string, number>>;
}

export class Metrics {
  readonly #bucketCounts = new Array<number>(BUCKETS.length).fill(0);
  #requests = 0;
  #seconds = 0;
  readonly #families: MetricFamily[] = [];
  readonly #calls = new Map<CallOutcome, number>([
    ['success', 0],
    ['error', 0],
    ['invalid', 0],
    ['input_required', 0],
  ]);

  /** Adds a metric read at each scrape (the run registry's gauges and counters, say). */
  register(family: MetricFamily): void {
    this.#families.push(family);
  }

  /** Records one `/mcp` request's duration. */
  observeRequest(seconds: number): void {
    this.#requests++;
    this.#seconds += seconds;
    BUCKETS.forEach((bound, i) => {
      if (seconds <= bound) this.#bucketCounts[i] = (this.#bucketCounts[i] as number) + 1;
    });
  }

  /** Records one `tools/call`: a result, a result with `isError`, or a refused call. */
  toolCall(outcome: CallOutcome): void {
    this.#calls.set(outcome, (this.#calls.get(outcome) ?? 0) + 1);
  }

  /** The metrics as Prometheus text (exposition format 0.0.4). */
  render(sessionsActive: number): string {
    const lines = [
      '# HELP mhl_tool_calls_total Tool calls by outcome.',
      '# TYPE mhl_tool_calls_total counter',
      ...[...this.#calls].map(([outcome, n]) => `mhl_tool_calls_total{outcome="${outcome}"} ${n}`),
      '# HELP mhl_sessions_active Legacy MCP sessions currently open.',
      '# TYPE mhl_sessions_active gauge',
      `mhl_sessions_active ${sessionsActive}`,
      '# HELP mhl_request_duration_seconds Time to answer an MCP request over HTTP.',
      '# TYPE mhl_request_duration_seconds histogram',
      ...BUCKETS.map(
        (bound, i) => `mhl_request_duration_seconds_bucket{le="${bound}"} ${this.#bucketCounts[i]}`,
      ),
      `mhl_request_duration_seconds_bucket{le="+Inf"} ${this.#requests}`,
      `mhl_request_duration_seconds_sum ${this.#seconds}`,
      `mhl_request_duration_seconds_count ${this.#requests}`,
      ...this.#families.flatMap(renderFamily),
    ];
    return `${lines.join('\n')}\n`;
  }
}

function renderFamily(family: MetricFamily): string[] {
  const value = family.read();
  const samples =
    typeof value === 'number'
      ? [`${family.name} ${value}`]
      : Object.entries(value).map(
          ([label, n]) => `${family.name}{${family.label}="${label}"} ${n}`,
        );
  return [
    `# HELP ${family.name} ${family.help}`,
    `# TYPE ${family.name} ${family.type}`,
    ...samples,
  ];
}
