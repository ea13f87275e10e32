// dom.js — building the page from data without ever parsing it as HTML.
//
// Every piece of server data reaches the DOM as a text node or as an
// attribute set through the DOM API: plan names, metric names, errors and
// raw tool output are user input.

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Sets props on e: attributes (false/null/undefined left out, true as
 *  an empty attribute) and on<event> listeners. */
function setProps(e, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
}

/** Appends children (nested arrays allowed) to parent; strings and numbers
 *  become text nodes, null/false/undefined are skipped. */
export function append(parent, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return parent;
}

/** Creates an HTML element with props (see setProps) and children. */
export function el(tag, props, ...children) {
  const e = document.createElement(tag);
  setProps(e, props);
  return append(e, children);
}

/** Creates an SVG element with props and children. */
export function svg(tag, props, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  setProps(e, props);
  return append(e, children);
}

/** Replaces the children of parent. */
export function put(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}
