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
    `**${report.passed ? "PASS" : "FAIL"}** ${report.name.toLowerCase()}: ${report.headline}`,
    "",
  ].join("\n");
}
