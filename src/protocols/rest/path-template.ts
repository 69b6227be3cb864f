/**
 * PathTemplate is a compiled google.api.http path such as
 * "/v2/payment-intents/{id}": literal segments and single-segment variables.
 */
export interface PathTemplate {
  readonly template: string;
  readonly variables: readonly string[];
  /** Returns the decoded variables when path matches, otherwise undefined. */
  match(path: string): Record<string, string> | undefined;
}

type Segment = { literal: string } | { variable: string };

/**
 * compilePathTemplate parses a template once at start-up. Only "{name}" and
 * "{name=*}" variables are supported; anything else (multi-segment "**",
 * verbs) is rejected at start rather than misrouted at run time.
 */
export function compilePathTemplate(template: string): PathTemplate {
  if (!template.startsWith("/")) throw new Error(`path template must start with "/": ${template}`);
  const segments: Segment[] = template
    .slice(1)
    .split("/")
    .map((part) => {
      const variable = /^\{([a-z_][a-z0-9_]*)(?:=\*)?\}$/.exec(part);
      if (variable) return { variable: variable[1]! };
      if (!/^[A-Za-z0-9._~-]+$/.test(part)) throw new Error(`unsupported path template segment "${part}" in ${template}`);
      return { literal: part };
    });
  return {
    template,
    variables: segments.flatMap((s) => ("variable" in s ? [s.variable] : [])),
    match(path) {
      const parts = path.slice(1).split("/");
      if (!path.startsWith("/") || parts.length !== segments.length) return undefined;
      const values: Record<string, string> = {};
      for (let i = 0; i < segments.length; i++) {
        const segment = segments[i]!;
        const part = parts[i]!;
        if ("literal" in segment) {
          if (part !== segment.literal) return undefined;
          continue;
        }
        if (part === "") return undefined;
        try {
          values[segment.variable] = decodeURIComponent(part);
        } catch {
          return undefined;
        }
      }
      return values;
    },
  };
}
