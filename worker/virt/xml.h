/* xml.h — libxml2, loaded at run time, and the few tree operations the
 * domain XML actuators need.
 *
 * libvirt speaks XML, and editing a domain definition by string
 * replacement breaks on the first attribute written in another order or an
 * element written open instead of empty. libxml2 parses and writes it
 * properly, and it is always present where libvirt is (libvirt0 depends on
 * it). Like libvirt (worker/virt.c) it is opened with dlopen when first
 * needed, so guest and bare-metal workers never load it; only its headers
 * are used at build time (libxml2-dev).
 *
 * A document is used from one thread at a time. Element pointers returned
 * are owned by their document and valid until it is freed or the element
 * removed. */
#ifndef HV_WORKER_VIRT_XML_H
#define HV_WORKER_VIRT_XML_H

#include <libxml/tree.h>
#include <stddef.h>

/** A parsed XML document. */
struct hv_xml;

/** Parses text (a domain definition). Returns the document, or NULL with
 *  the reason in err (libxml2 missing, or the parser's message with its
 *  line). */
struct hv_xml *hv_xml_parse(const char *text, char *err, size_t len);

/** A new document whose root is an empty element called root (a storage
 *  pool's or volume's definition, built rather than printed, so that no
 *  value can add markup). Returns it, or NULL with the reason in err. */
struct hv_xml *hv_xml_new(const char *root, char *err, size_t len);

/** Frees x; NULL is fine. */
void hv_xml_free(struct hv_xml *x);

/** The document as text, without an XML declaration: a new string the
 *  caller frees, or NULL when memory runs out. */
char *hv_xml_text(const struct hv_xml *x);

/** The root element. */
xmlNodePtr hv_xml_root(const struct hv_xml *x);

/** The first child element of parent called name (any name when name is
 *  NULL), or NULL. */
xmlNodePtr hv_xml_child(xmlNodePtr parent, const char *name);

/** The next sibling element of node called name (any name when NULL), or
 *  NULL. */
xmlNodePtr hv_xml_next(xmlNodePtr node, const char *name);

/** The first child element called name, created empty at the end of
 *  parent when there is none. NULL when memory runs out. */
xmlNodePtr hv_xml_ensure(xmlNodePtr parent, const char *name);

/** A new empty child element called name at the end of parent, or NULL
 *  (also when parent is NULL, so calls can nest). */
xmlNodePtr hv_xml_add(xmlNodePtr parent, const char *name);

/** Like hv_xml_add(), the element in namespace href, declared on it with
 *  prefix (<prefix:name xmlns:prefix="href"/>). */
xmlNodePtr hv_xml_add_ns(xmlNodePtr parent, const char *name, const char *href, const char *prefix);

/** Unlinks node from its document and frees it (with its children); NULL
 *  is fine. */
void hv_xml_remove(xmlNodePtr node);

/** The value of node's attribute name, or NULL when it has none. Points
 *  into the document. */
const char *hv_xml_attr(xmlNodePtr node, const char *name);

/** Sets node's attribute name to value, or removes it when value is NULL.
 *  Returns 0, or -1 when memory runs out or node is NULL (removing from
 *  no node is fine). */
int hv_xml_set_attr(xmlNodePtr node, const char *name, const char *value);

/** The text directly inside node ("" when none). Points into the
 *  document. */
const char *hv_xml_content(xmlNodePtr node);

/** Replaces what node holds with text, taken as it is ('<' and '&' are
 *  characters, escaped when the document is written). Returns 0, or -1
 *  when memory runs out or node is NULL. */
int hv_xml_set_content(xmlNodePtr node, const char *text);

/** A new child element called name at the end of parent holding text (as
 *  hv_xml_set_content() puts it), or NULL (also when parent is NULL, so
 *  calls can nest). */
xmlNodePtr hv_xml_add_text(xmlNodePtr parent, const char *name, const char *text);

#endif
