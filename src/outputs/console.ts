/**
 * Progress and the final summary on stderr: on a terminal a live status line per agent, in CI
 * logs one line per change and a heartbeat at most once a minute.
 */

import { MAX_CONSECUTIVE_FAULTS } from "../service/timing.ts";
import { describeCiMetadata } from "../ci/detect.ts";
import type { AgentOutcome, Outcome, RunReport } from "../report/outcome.ts";
import { explainExitCode, OUTCOME_LABELS, outcomeReason } from "../report/words.ts";
import type { GateEvent } from "../service/poll.ts";
import type { RunOutput, RunPlan } from "./output.ts";
import type { Clock } from "../effects.ts";
import type { Output } from "./streams.ts";
import { sanitize } from "../text/sanitize.ts";
import { formatBound, formatDuration } from "../text/duration.ts";

/** In CI logs, a "still waiting" line comes after this long without any other line. */
export const HEARTBEAT_MS = 60_000;

interface ConsoleOptions {
  /** Secrets masked before service text is cut: a cut secret's beginning escapes stderr's mask. */
  readonly output: Pick<Output, "stderr" | "secrets">;
  readonly clock: Pick<Clock, "monotonic" | "sleep">;
  readonly header: string;
  readonly tty: boolean;
  readonly color: boolean;
}

const _WARN = ["\x1b[33m", "\x1b[39m"] as const;
const _STYLE: Readonly<Record<Outcome | "dim", readonly [string, string]>> = {
  passed: ["\x1b[32m", "\x1b[39m"],
  failed: ["\x1b[31m", "\x1b[39m"],
  unchecked: _WARN,
  timed_out: _WARN,
  interrupted: _WARN,
  triggered: ["\x1b[1m", "\x1b[22m"],
  dim: ["\x1b[2m", "\x1b[22m"],
};

export class ConsoleReporter implements RunOutput {
  readonly kind = "console";
  readonly name = "the console";
  readonly #agents = new Map<string, { status: string | null; done: boolean }>();
  #started = 0;
  #deadline = 0;
  #lastWrite = 0;
  #liveLines = 0;

  #safe(text: string): string {
    return sanitize(text, { maxLength: 200, secrets: this.options.output.secrets });
  }

  constructor(private readonly options: ConsoleOptions) {}

  start(plan: RunPlan): void {
    this.begin(plan.agents, plan.deadline);
    void (async () => {
      for (;;) {
        await this.options.clock.sleep(this.options.tty ? 1000 : 5000, plan.ended);
        this.tick();
      }
    })().catch(() => {}); // Every gate has ended.
    this.line(this.options.header);
    this.line(describeCiMetadata(plan.metadata, plan.context));
  }

  begin(agents: readonly string[], deadline: number): void {
    this.#started = this.options.clock.monotonic();
    this.#lastWrite = this.#started;
    this.#deadline = deadline;
    for (const agent of agents) this.#agents.set(agent, { status: null, done: false });
  }

  /** `text` is already safe to print; without it, only the live lines are drawn again. */
  line(text?: string): void {
    this.#clearLive();
    if (text !== undefined) {
      this.options.output.stderr(`${text}\n`);
      this.#lastWrite = this.options.clock.monotonic();
    }
    this.#drawLive();
  }

  event(agentId: string, event: GateEvent): void {
    const agent = this.#agents.get(agentId);
    if (agent === undefined) return;
    if (event.type === "status") agent.status = event.status;
    const says = this.#says(event);
    this.line(says === null ? undefined : `agent ${agentId}: ${says}`);
  }

  tick(): void {
    if (this.options.tty) return this.line();
    const waiting = this.#waiting();
    const quiet = this.options.clock.monotonic() - this.#lastWrite;
    if (waiting.length === 0 || quiet < HEARTBEAT_MS) return;
    const list = waiting.map(([id, status]) => `${id} ${status}`).join(", ");
    this.line(`still waiting (${this.#times()}): ${list}`);
  }

  agentDone(outcome: AgentOutcome): void {
    const agent = this.#agents.get(outcome.agentId);
    if (agent !== undefined) agent.done = true;
    const verdict = this.#paint(OUTCOME_LABELS[outcome.outcome].verdict, outcome.outcome);
    const run = outcome.runId === null ? "" : ` (run ${_line(outcome.runId)})`;
    const reason = outcomeReason(outcome);
    const why = reason === null ? "" : `: ${_line(reason)}`;
    this.line(`agent ${outcome.agentId}: ${verdict}${run}${why}`);
  }

  finish(report: RunReport): void {
    this.summary(report);
    for (const agent of report.agents) {
      if (agent.outcome !== "interrupted" || agent.runId === null) continue;
      const where = agent.url === null ? "" : `: ${agent.url}`;
      this.options.output.stderr(
        `run ${agent.runId} of agent ${agent.agentId} is still going on the service${where}\n`,
      );
    }
  }

  summary(report: RunReport): void {
    this.#clearLive();
    this.#agents.forEach((agent) => agent.done = true);
    const rows = [
      ["agent", "run", "status", "verdict", "duration", "link"],
      ...report.agents.map((agent) => [
        _line(agent.agentId),
        agent.runId === null ? "-" : _line(agent.runId),
        agent.status === null ? "-" : _line(agent.status),
        OUTCOME_LABELS[agent.outcome].verdict,
        formatDuration(agent.durationMs),
        agent.url === null ? "-" : _line(agent.url),
      ]),
    ];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    const lines = rows.map((row, index) =>
      row.map((cell, column) => {
        const padded = column === row.length - 1 ? cell : cell.padEnd(widths[column]!);
        if (index === 0) return this.#paint(padded, "dim");
        if (column === 3) return this.#paint(padded, report.agents[index - 1]!.outcome);
        return padded;
      }).join("  ").trimEnd()
    );
    this.options.output.stderr(`\n${lines.join("\n")}\n\n${explainExitCode(report)}\n`);
  }

  // On a terminal a status is only the live line, drawn again.
  #says(event: GateEvent): string | null {
    switch (event.type) {
      case "status": {
        const status = event.status === null ? "(no status)" : this.#safe(event.status);
        return this.options.tty ? null : `status ${status} (${this.#times()})`;
      }
      case "triggered":
        return `triggered run ${this.#safe(event.runId)}${
          event.url === null ? "" : `: ${this.#safe(event.url)}`
        }`;
      case "attached":
        return `attached to run ${this.#safe(event.runId)}`;
      case "not_visible_yet":
        return `run not visible yet (404 right after the trigger); retrying in ${
          formatDuration(event.delayMs)
        }`;
    }
    const what = event.operation === "trigger" ? "trigger" : "reading the run";
    const failed = `${what} failed: ${this.#safe(event.message)}`;
    const next = `next in ${formatDuration(event.delayMs)}`;
    if (event.unreachable === undefined || event.giveUpAfterMs === undefined) {
      return `${failed}; attempt ${event.consecutive} of ${MAX_CONSECUTIVE_FAULTS}, ${next}`;
    }
    // Said in full once: the address, what went wrong, what to check.
    const giveUpAfter = formatBound(event.giveUpAfterMs, 1000);
    if (event.consecutive === 1) return `${failed}; trying for up to ${giveUpAfter}, ${next}`;
    const why = event.unreachable === "refused" ? "connection refused" : "host not found";
    return `${what} failed again (${why}); attempt ${event.consecutive}, ${next}`;
  }

  #times(): string {
    const now = this.options.clock.monotonic();
    const left = Math.max(0, this.#deadline - now);
    return `${formatBound(now - this.#started, 1000)} elapsed, ${formatBound(left, 1000)} left`;
  }

  #paint(text: string, kind: Outcome | "dim"): string {
    return this.options.color ? `${_STYLE[kind][0]}${text}${_STYLE[kind][1]}` : text;
  }

  #clearLive(): void {
    if (!this.options.tty || this.#liveLines === 0) return;
    this.options.output.stderr(`\x1b[${this.#liveLines}A\x1b[J`);
    this.#liveLines = 0;
  }

  #drawLive(): void {
    if (!this.options.tty) return;
    const waiting = this.#waiting();
    if (waiting.length === 0) return;
    const times = this.#times();
    const mark = this.#paint("…", "dim");
    this.options.output.stderr(
      waiting.map(([id, status]) => `${mark} agent ${id}: ${status} (${times})\n`).join(""),
    );
    this.#liveLines = waiting.length;
  }

  #waiting(): [string, string][] {
    return [...this.#agents].flatMap(([id, agent]) =>
      agent.done ? [] : [[id, agent.status === null ? "waiting" : this.#safe(agent.status)]]
    );
  }
}

// Sanitizing again keeps a caller that forgot from printing a control character or a workflow
// command. No second cut: a failed gate's reason, bounded field by field, would lose its end.
function _line(text: string): string {
  return sanitize(text, { maxLength: Infinity });
}
