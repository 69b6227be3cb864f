/** DrillReport is what one drill did, its figures, and whether it passed. */
export interface DrillReport {
  name: string;
  /** One sentence: what the drill did. */
  did: string;
  /** The figures that decide the verdict, for the pass/fail line. */
  headline: string;
  /** More figures, one line each. */
  figures: string[];
  /** A markdown table of the figures, when they compare across cases (its lines). */
  table?: string[];
  passed: boolean;
  /** The checks that failed, by name, when the verdict is made of several (see verdict). */
  failed?: string[];
}

/**
 * verdict turns named checks into a pass and the names of those that failed,
 * so a FAIL line says which check it was without rerunning the drill.
 */
export function verdict(checks: Record<string, boolean>): { passed: boolean; failed: string[] } {
  const failed = Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name);
  return { passed: failed.length === 0, failed };
}

/** formatDrillReport renders a report for the terminal and for docs/RELIABILITY.md. */
export function formatDrillReport(report: DrillReport): string {
  return [
    `### ${report.name}`,
    "",
    report.did,
    "",
    ...report.figures.map((line) => `- ${line}`),
    "",
    ...(report.table ? [...report.table, ""] : []),
    `**${report.passed ? "PASS" : "FAIL"}** ${report.name.toLowerCase()}: ${report.headline}` +
      (!report.passed && report.failed?.length ? ` (failed: ${report.failed.join("; ")})` : ""),
    "",
  ].join("\n");
}
