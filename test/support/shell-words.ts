/**
 * The small part of POSIX shell syntax the documentation's one-line commands
 * use, so a test can run them as printed without handing them to a shell
 * (and so can put real ids where the pages print `pi_…`): commands one per
 * line, `\` at a line's end continuing it, `# comments`, single quotes
 * (literal, across lines), double quotes and bare words with `$NAME` and
 * `${NAME}` expanded from vars, and `NAME=value` lines setting them. Anything else (pipes, `$(…)`, functions,
 * loops) is refused, so a page that starts using it gets a whole-script run
 * instead of a wrong reading.
 */

/** A command as printed: its words after quoting and expansion, and the line it starts on (1-based, within the text). */
export interface ShellCommand {
  words: string[];
  line: number;
}

const unsupported = /[|;&<>`()]/;

export function shellCommands(text: string, given: Record<string, string>): ShellCommand[] {
  const vars = { ...given };
  const commands: ShellCommand[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let line = 1;
  let startLine = 1;
  const expand = (at: number): [string, number] => {
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(text.slice(at)) ?? /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(at));
    if (!braced) throw new Error(`line ${line}: a lone $ is not supported`);
    const value = vars[braced[1]!];
    if (value === undefined) throw new Error(`line ${line}: $${braced[1]} is not set`);
    return [value, at + braced[0].length];
  };
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    const assignment = words.length === 1 ? /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(words[0]!) : null;
    if (assignment) vars[assignment[1]!] = assignment[2]!;
    else if (words.length > 0) commands.push({ words, line: startLine });
    words = [];
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (words.length === 0 && word === undefined && c !== " " && c !== "\n") startLine = line;
    if (c === "\\" && text[i + 1] === "\n") {
      i += 2;
      line += 1;
    } else if (c === "\n") {
      endCommand();
      line += 1;
      i += 1;
    } else if (c === " " || c === "\t") {
      endWord();
      i += 1;
    } else if (c === "#" && word === undefined) {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error(`line ${line}: unclosed single quote`);
      const quoted = text.slice(i + 1, end);
      line += quoted.split("\n").length - 1;
      word = (word ?? "") + quoted;
      i = end + 1;
    } else if (c === '"') {
      word = word ?? "";
      i += 1;
      while (text[i] !== '"') {
        if (i >= text.length) throw new Error(`line ${line}: unclosed double quote`);
        if (text[i] === "\\" && /["\\$`]/.test(text[i + 1] ?? "")) {
          word += text[i + 1];
          i += 2;
        } else if (text[i] === "$") {
          const [value, next] = expand(i);
          word += value;
          i = next;
        } else {
          if (text[i] === "\n") line += 1;
          word += text[i];
          i += 1;
        }
      }
      i += 1;
    } else if (c === "$") {
      const [value, next] = expand(i);
      word = (word ?? "") + value;
      i = next;
    } else if (unsupported.test(c)) {
      throw new Error(`line ${line}: '${c}' needs a real shell`);
    } else {
      word = (word ?? "") + c;
      i += 1;
    }
  }
  endCommand();
  return commands;
}
