/* xml.c — libxml2 at run time; see xml.h. */
#include "worker/virt/xml.h"

#include <dlfcn.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBXML2_SONAME "libxml2.so.2"

#define HV_XML_FUNCTIONS(X)                                                                        \
    X(ReadMemory)                                                                                  \
    X(FreeDoc)                                                                                     \
    X(DocGetRootElement)                                                                           \
    X(GetLastError)                                                                                \
    X(NewDocNode)                                                                                  \
    X(AddChild)                                                                                    \
    X(UnlinkNode)                                                                                  \
    X(FreeNode)                                                                                    \
    X(HasProp)                                                                                     \
    X(SetProp)                                                                                     \
    X(UnsetProp)                                                                                   \
    X(NodeSetContent)                                                                              \
    X(NodeAddContent)                                                                              \
    X(NewDoc)                                                                                      \
    X(DocSetRootElement)                                                                           \
    X(BufferCreate)                                                                                \
    X(BufferFree)                                                                                  \
    X(BufferContent)                                                                               \
    X(NodeDump)                                                                                    \
    X(NewNs)                                                                                       \
    X(SetNs)

static struct {
#define HV_XML_FIELD(name) __typeof__(xml##name) *name;
    HV_XML_FUNCTIONS(HV_XML_FIELD)
#undef HV_XML_FIELD
} lx;
static int loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen(LIBXML2_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(load_error, sizeof load_error, "cannot load %s (libxml2, which libvirt needs): %s",
                 LIBXML2_SONAME, dlerror());
        return;
    }
#define HV_XML_RESOLVE(name)                                                                       \
    {                                                                                              \
        void *sym = dlsym(h, "xml" #name);                                                         \
        if (sym == NULL) {                                                                         \
            snprintf(load_error, sizeof load_error, "the installed libxml2 lacks xml" #name);      \
            dlclose(h);                                                                            \
            return;                                                                                \
        }                                                                                          \
        memcpy(&lx.name, &sym, sizeof sym);                                                        \
    }
    HV_XML_FUNCTIONS(HV_XML_RESOLVE)
#undef HV_XML_RESOLVE
    loaded = 1;
}

struct hv_xml {
    xmlDocPtr doc;
};

/* A new empty document, or NULL with err. */
static struct hv_xml *doc_new(char *err, size_t len)
{
    pthread_once(&once, load);
    if (!loaded) {
        snprintf(err, len, "%s", load_error);
        return NULL;
    }
    struct hv_xml *x = calloc(1, sizeof *x);
    if (x == NULL)
        snprintf(err, len, "out of memory");
    return x;
}

struct hv_xml *hv_xml_new(const char *root, char *err, size_t len)
{
    struct hv_xml *x = doc_new(err, len);
    if (x == NULL)
        return NULL;
    x->doc = lx.NewDoc((const xmlChar *)"1.0");
    xmlNodePtr r = x->doc != NULL ? lx.NewDocNode(x->doc, NULL, (const xmlChar *)root, NULL) : NULL;
    if (r == NULL) {
        snprintf(err, len, "out of memory");
        hv_xml_free(x);
        return NULL;
    }
    lx.DocSetRootElement(x->doc, r);
    return x;
}

struct hv_xml *hv_xml_parse(const char *text, char *err, size_t len)
{
    struct hv_xml *x = doc_new(err, len);
    if (x == NULL)
        return NULL;
    /* No network, no entity expansion, and no messages on stderr: the
     * error is reported once, here. */
    x->doc = lx.ReadMemory(text, (int)strlen(text), "domain.xml", NULL,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (x->doc == NULL || lx.DocGetRootElement(x->doc) == NULL) {
        const xmlError *e = lx.GetLastError();
        snprintf(err, len, "unreadable XML%s%s", e != NULL && e->message ? ": " : "",
                 e != NULL && e->message ? e->message : "");
        /* libxml2's messages end with a newline */
        size_t n = strlen(err);
        if (n > 0 && err[n - 1] == '\n')
            err[n - 1] = '\0';
        hv_xml_free(x);
        return NULL;
    }
    return x;
}

void hv_xml_free(struct hv_xml *x)
{
    if (x == NULL)
        return;
    if (x->doc != NULL)
        lx.FreeDoc(x->doc);
    free(x);
}

char *hv_xml_text(const struct hv_xml *x)
{
    xmlBufferPtr buf = lx.BufferCreate();
    if (buf == NULL)
        return NULL;
    char *out = NULL;
    if (lx.NodeDump(buf, x->doc, lx.DocGetRootElement(x->doc), 0, 0) >= 0)
        out = strdup((const char *)lx.BufferContent(buf));
    lx.BufferFree(buf);
    return out;
}

xmlNodePtr hv_xml_root(const struct hv_xml *x)
{
    return lx.DocGetRootElement(x->doc);
}

static bool named(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE &&
           (name == NULL || strcmp((const char *)n->name, name) == 0);
}

xmlNodePtr hv_xml_child(xmlNodePtr parent, const char *name)
{
    for (xmlNodePtr n = parent != NULL ? parent->children : NULL; n != NULL; n = n->next)
        if (named(n, name))
            return n;
    return NULL;
}

xmlNodePtr hv_xml_next(xmlNodePtr node, const char *name)
{
    for (xmlNodePtr n = node != NULL ? node->next : NULL; n != NULL; n = n->next)
        if (named(n, name))
            return n;
    return NULL;
}

xmlNodePtr hv_xml_add(xmlNodePtr parent, const char *name)
{
    if (parent == NULL)
        return NULL;
    xmlNodePtr n = lx.NewDocNode(parent->doc, NULL, (const xmlChar *)name, NULL);
    if (n != NULL && lx.AddChild(parent, n) == NULL) {
        lx.FreeNode(n);
        return NULL;
    }
    return n;
}

xmlNodePtr hv_xml_add_ns(xmlNodePtr parent, const char *name, const char *href, const char *prefix)
{
    xmlNodePtr n = hv_xml_add(parent, name);
    if (n == NULL)
        return NULL;
    xmlNsPtr ns = lx.NewNs(n, (const xmlChar *)href, (const xmlChar *)prefix);
    if (ns == NULL) {
        hv_xml_remove(n);
        return NULL;
    }
    lx.SetNs(n, ns);
    return n;
}

xmlNodePtr hv_xml_ensure(xmlNodePtr parent, const char *name)
{
    if (parent == NULL)
        return NULL;
    xmlNodePtr n = hv_xml_child(parent, name);
    return n != NULL ? n : hv_xml_add(parent, name);
}

void hv_xml_remove(xmlNodePtr node)
{
    if (node == NULL)
        return;
    lx.UnlinkNode(node);
    lx.FreeNode(node);
}

const char *hv_xml_attr(xmlNodePtr node, const char *name)
{
    if (node == NULL)
        return NULL;
    xmlAttrPtr a = lx.HasProp(node, (const xmlChar *)name);
    if (a == NULL)
        return NULL;
    /* An attribute's value is its text children; libvirt's are one. */
    if (a->children == NULL || a->children->content == NULL)
        return "";
    return (const char *)a->children->content;
}

int hv_xml_set_attr(xmlNodePtr node, const char *name, const char *value)
{
    if (node == NULL)
        return value == NULL ? 0 : -1;
    if (value == NULL) {
        lx.UnsetProp(node, (const xmlChar *)name);
        return 0;
    }
    return lx.SetProp(node, (const xmlChar *)name, (const xmlChar *)value) != NULL ? 0 : -1;
}

const char *hv_xml_content(xmlNodePtr node)
{
    for (xmlNodePtr n = node != NULL ? node->children : NULL; n != NULL; n = n->next)
        if (n->type == XML_TEXT_NODE && n->content != NULL)
            return (const char *)n->content;
    return "";
}

int hv_xml_set_content(xmlNodePtr node, const char *text)
{
    if (node == NULL)
        return -1;
    /* xmlNodeSetContent would read '&' as the start of an entity
     * reference: it empties the node, and xmlNodeAddContent adds the text
     * as it is (escaped when written). libxml2 2.9's functions return
     * nothing. */
    lx.NodeSetContent(node, NULL);
    lx.NodeAddContent(node, (const xmlChar *)text);
    return 0;
}

xmlNodePtr hv_xml_add_text(xmlNodePtr parent, const char *name, const char *text)
{
    xmlNodePtr n = hv_xml_add(parent, name);
    if (n != NULL && hv_xml_set_content(n, text) != 0) {
        hv_xml_remove(n);
        return NULL;
    }
    return n;
}
