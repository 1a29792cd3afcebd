/** Reads a comment the way a Markdown renderer does (markdown-it with raw HTML and autolinks on). */

// @ts-types="npm:@types/markdown-it@14.1.2"
import MarkdownIt from "npm:markdown-it@14.1.0";

// GitHub and GitLab render raw HTML (sanitized) and autolink bare URLs and e-mail addresses;
// neither links a bare domain without `www.`, so fuzzy links stay off.
const md = new MarkdownIt({ html: true, linkify: true });
md.linkify.set({ fuzzyLink: false, fuzzyEmail: true });

/** What a rendered comment holds. */
export interface Rendered {
  /** Every block-level token type, in order. */
  readonly blockTypes: string[];
  /** The content of every raw HTML block. */
  readonly htmlBlocks: string[];
  /** Inline token types other than text and soft/hard breaks, in order. */
  readonly inlineTypes: string[];
  /** The `href` of every link, in order. */
  readonly links: string[];
  /** Each body row of each table: the text of its cells. */
  readonly rows: string[][];
  /** The header cells of each table. */
  readonly headers: string[][];
}

/** Parses `markdown` and collects what the tests check. */
export function render(markdown: string): Rendered {
  const tokens = md.parse(markdown, {});
  const result: Rendered = {
    blockTypes: [],
    htmlBlocks: [],
    inlineTypes: [],
    links: [],
    rows: [],
    headers: [],
  };
  let row: string[] | null = null;
  let inHead = false;
  for (const token of tokens) {
    result.blockTypes.push(token.type);
    if (token.type === "html_block") result.htmlBlocks.push(token.content);
    if (token.type === "thead_open") inHead = true;
    if (token.type === "thead_close") inHead = false;
    if (token.type === "tr_open") row = [];
    if (token.type === "tr_close" && row !== null) {
      (inHead ? result.headers : result.rows).push(row);
      row = null;
    }
    if (token.type !== "inline") continue;
    let text = "";
    for (const child of token.children ?? []) {
      if (child.type === "text" || child.type === "softbreak") text += child.content;
      else if (child.type === "code_inline") text += child.content;
      if (!["text", "softbreak", "hardbreak"].includes(child.type)) {
        result.inlineTypes.push(child.type);
      }
      if (child.type === "link_open") result.links.push(child.attrGet("href") ?? "");
    }
    row?.push(text);
  }
  return result;
}

/**
 * Renders `markdown` to HTML with cmark-gfm, GitHub's own renderer, with GitHub's extensions
 * (tables, autolinks, strikethrough, the tag filter); `--unsafe` lets raw HTML through so that any
 * would be seen. Needs `cmark-gfm` on PATH (Debian's package of that name).
 */
export async function cmarkGfm(markdown: string): Promise<string> {
  const child = new Deno.Command("cmark-gfm", {
    args: ["--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(markdown));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  if (code !== 0) throw new Error(`cmark-gfm exited ${code}: ${new TextDecoder().decode(stderr)}`);
  return new TextDecoder().decode(stdout);
}
