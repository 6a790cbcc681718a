/**
 * A string's length in Unicode code points (a surrogate pair counts once), as AJV counts
 * `minLength`/`maxLength`: the generated validators call this instead of AJV's runtime copy
 * (`ajv/dist/runtime/ucs2length`), so no part of AJV ships in a bundle.
 */
export const ucs2length = (text: string): number => {
  let length = 0;
  for (let position = 0; position < text.length; length += 1) {
    const code = text.charCodeAt(position);
    position += 1;
    if (code >= 0xd800 && code <= 0xdbff && position < text.length && (text.charCodeAt(position) & 0xfc00) === 0xdc00) position += 1;
  }
  return length;
};
