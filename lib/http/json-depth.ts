/**
 * Whether JSON text nests arrays/objects deeper than `maxDepth`, in one pass that skips string
 * contents. The body parser's prototype guard walks the parsed value recursively and overflows
 * the stack on a few thousand levels, so depth is checked on the text first.
 */
export const exceedsJsonDepth = (text: string, maxDepth: number): boolean => {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 92 /* \ */) i += 1;
      else if (code === 34 /* " */) inString = false;
    } else if (code === 34) {
      inString = true;
    } else if (code === 91 /* [ */ || code === 123 /* { */) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (code === 93 /* ] */ || code === 125 /* } */) {
      depth -= 1;
    }
  }
  return false;
};
