/**
 * A tiny element builder. Data from the API only ever becomes text nodes or attribute values, never HTML, so a
 * name like `<img onerror=…>` shows as typed. No inline styles either: the page's CSP forbids them.
 */

export type Child = Node | string | number | null | undefined | false | Child[];
type AttrValue = string | number | boolean | null | undefined;
export type Attrs = Record<string, AttrValue | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(
	tag: K,
	attrs?: Attrs | null,
	...children: Child[]
): HTMLElementTagNameMap[K] {
	const element = document.createElement(tag);
	for (const [name, value] of Object.entries(attrs ?? {})) {
		if (typeof value === "function") element.addEventListener(name.slice(2).toLowerCase(), value);
		else if (value === true) element.setAttribute(name, "");
		else if (value !== false && value !== null && value !== undefined)
			element.setAttribute(name, String(value));
	}
	append(element, children);
	return element;
}

export function append(parent: Node, children: Child[]): void {
	for (const child of children) {
		if (child === null || child === undefined || child === false) continue;
		if (Array.isArray(child)) append(parent, child);
		else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
	}
}

/** Replaces everything inside `parent`. */
export function fill(parent: Element, ...children: Child[]): void {
	parent.replaceChildren();
	append(parent, children);
}

export function formValues(form: HTMLFormElement): Record<string, string> {
	const values: Record<string, string> = {};
	for (const [name, value] of new FormData(form)) if (typeof value === "string") values[name] = value.trim();
	return values;
}
