/* advice_format.c — a plan's recommendations as configuration-management
 * changes; see advice_format.h.
 *
 * A recommendation becomes one setting of a kind read off the catalogue:
 * a host file under /sys (thp, ksm, halt_poll_ns), a file of the plan's
 * disk (/sys/block/DISK/queue/...), a reboot-class module parameter (its
 * host_file is /sys/module/MODULE/parameters/PARAM), or anything else,
 * which only a person applies (its apply hint, as a comment). Each form is
 * one function writing to a memory stream; a level reaches the text only
 * after hv_factor_level() accepted it, so no text of the report but the
 * catalogue's own levels lands outside a comment. */
#include "advice_format.h"

#include "factors.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** How a setting is applied. */
enum kind {
    K_FILE,   /* a file under /sys, written now and at boot (systemd-tmpfiles) */
    K_DISK,   /* an attribute of the plan's disk, written now and by a udev rule */
    K_MODULE, /* a module parameter: /etc/modprobe.d, effective at the module's reload */
    K_MANUAL, /* none of these: the catalogue's apply hint, as a comment */
};

/** One recommended setting. */
struct setting {
    const json_t *rec;               /* the report's recommendation */
    const struct hv_factor_def *def; /* NULL for a factor the catalogue lacks */
    const char *factor;
    enum kind kind;
    char level[64], dflt[64];   /* as hv_factor_level() wrote them */
    const char *value, *dvalue; /* what level and the default write */
    char path[256];             /* K_FILE, K_DISK: the file under / */
    char attr[128];             /* K_DISK: the attribute under the disk ("queue/scheduler") */
    char module[64], param[64]; /* K_MODULE */
    const char *why;            /* K_MANUAL: why no form applies it */
};

/** The recommendations of one report, one setting per factor. */
struct advice {
    long long plan;
    const char *name;
    bool partial;
    const char *disk; /* the disk's kernel name, or NULL */
    char disk_buf[64];
    struct setting *s;
    size_t n;
    char slug[64]; /* "hvbench-plan-12": the name of the files written */
};

/* ---- reading the report ---------------------------------------------- */

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

/* Normalises level (a string as the report has it) of def into out; false
 * when the catalogue refuses it. */
static bool level_ok(const struct hv_factor_def *def, const char *level, char *out, size_t len)
{
    json_t *l = json_string(level);
    bool ok = l != NULL && hv_factor_level(def, l, out, len, NULL, 0) == 0;
    json_decref(l);
    return ok;
}

/* The kernel name of disk ("/dev/sda" → "sda") into buf when it is a plain
 * name a path and a udev rule can hold; NULL otherwise. */
static const char *disk_name(const char *disk, char *buf, size_t len)
{
    if (disk == NULL)
        return NULL;
    const char *base = strrchr(disk, '/');
    base = base != NULL ? base + 1 : disk;
    if (base[0] == '\0' || base[0] == '.' || strlen(base) >= len)
        return NULL;
    for (const char *p = base; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return NULL;
    snprintf(buf, len, "%s", base);
    return buf;
}

/* Sets s's kind and files from the catalogue row s->def. */
static void classify(struct setting *s, const char *disk)
{
    const struct hv_factor_def *d = s->def;
    s->kind = K_MANUAL;
    if (d == NULL) {
        s->why = "a factor the catalogue does not know (a site factor is applied by the "
                 "programs its host worker's configuration names)";
        return;
    }
    if (!level_ok(d, str(s->rec, "level"), s->level, sizeof s->level) ||
        !level_ok(d, str(s->rec, "default"), s->dflt, sizeof s->dflt)) {
        s->why = "a level the catalogue does not accept";
        return;
    }
    s->value = hv_factor_host_value(d, s->level);
    s->dvalue = hv_factor_host_value(d, s->dflt);
    const char *file = d->host_file;
    if (d->scope == HV_SCOPE_GUEST) {
        s->why = "a setting of each guest domain (its libvirt XML or virsh), not of the host";
    } else if (file == NULL) {
        s->why = "a host setting without a file to write";
    } else if (d->disruption == HV_DISRUPT_REBOOT) {
        if (sscanf(file, "/sys/module/%63[^/]/parameters/%63s", s->module, s->param) == 2)
            s->kind = K_MODULE;
        else
            s->why = "a reboot-class setting that is not a module parameter";
    } else if (strstr(file, "/DISK/") != NULL) {
        const char *at = strstr(file, "/DISK/");
        if (disk == NULL) {
            s->why = "a setting of the plan's disk, and the plan names no disk (tuning.disk)";
        } else {
            s->kind = K_DISK;
            snprintf(s->attr, sizeof s->attr, "%s", at + 6);
            snprintf(s->path, sizeof s->path, "%.*s/%s/%s", (int)(at - file), file, disk, s->attr);
        }
    } else {
        s->kind = K_FILE;
        snprintf(s->path, sizeof s->path, "%s", file);
    }
}

/* Reads report into *a: the best ranked recommendation of each factor.
 * Returns 0, or -1 when memory runs out. */
static int advice_read(const json_t *report, const char *disk, struct advice *a)
{
    const json_t *recs = json_object_get(report, "recommendations");
    *a = (struct advice){
        .plan = (long long)json_integer_value(json_object_get(report, "plan_id")),
        .name = str(report, "name"),
        .partial = json_is_true(json_object_get(report, "partial")),
    };
    a->disk = disk_name(disk, a->disk_buf, sizeof a->disk_buf);
    snprintf(a->slug, sizeof a->slug, "hvbench-plan-%lld", a->plan);
    size_t n = json_array_size(recs);
    a->s = calloc(n ? n : 1, sizeof *a->s);
    if (a->s == NULL)
        return -1;
    size_t i;
    const json_t *r;
    json_array_foreach(recs, i, r)
    {
        const char *factor = str(r, "factor");
        bool seen = false;
        for (size_t k = 0; k < a->n && !seen; k++)
            seen = strcmp(a->s[k].factor, factor) == 0;
        if (seen)
            continue; /* a lower ranked level of a factor already set */
        struct setting *s = &a->s[a->n++];
        s->rec = r;
        s->factor = factor;
        s->def = hv_factor_find(factor);
        classify(s, a->disk);
    }
    return 0;
}

/* ---- what every form shares ------------------------------------------ */

/* Writes text as one comment line after prefix ("# ", "#   gain: "),
 * control characters replaced by '?': nothing from the report can end the
 * comment. */
static void comment(FILE *f, const char *prefix, const char *text)
{
    fputs(prefix, f);
    for (const char *p = text; *p != '\0'; p++)
        fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
    fputc('\n', f);
}

/* The level a setting names in comments: the normalised one when the
 * catalogue accepted it, else the report's. */
static const char *level_of(const struct setting *s)
{
    return s->level[0] != '\0' ? s->level : str(s->rec, "level");
}

static const char *default_of(const struct setting *s)
{
    return s->dflt[0] != '\0' ? s->dflt : str(s->rec, "default");
}

/* The evidence of setting s: what it gains (each with its interval), what
 * it hurts, its risk and disruption, and what its rollback returns to. */
static void evidence(FILE *f, const struct setting *s)
{
    char line[512];
    snprintf(line, sizeof line, "%s=%s (rank %lld; the plan's default: %s)", s->factor, level_of(s),
             (long long)json_integer_value(json_object_get(s->rec, "rank")), default_of(s));
    comment(f, "# ", line);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(s->rec, "gains"), i, e)
        comment(f, "#   gain: ", str(e, "sentence"));
    json_array_foreach(json_object_get(s->rec, "hurts"), i, e)
        comment(f, "#   hurts: ", str(e, "sentence"));
    const char *risk = json_string_value(json_object_get(s->rec, "risk"));
    snprintf(line, sizeof line, "%s%s%s", str(s->rec, "risk_level"), risk ? ": " : "",
             risk ? risk : "");
    comment(f, "#   risk: ", line);
    comment(f, "#   disruption: ", str(s->rec, "disruption"));
    snprintf(line, sizeof line, "%s=%s", s->factor, default_of(s));
    comment(f, "#   rollback: ", line);
}

/* The settings no form applies, as comments after intro: each with why and
 * the catalogue's apply hint for its level. */
static void manual(FILE *f, const struct advice *a, const char *intro)
{
    bool any = false;
    for (size_t i = 0; i < a->n; i++) {
        const struct setting *s = &a->s[i];
        if (s->kind != K_MANUAL)
            continue;
        if (!any)
            fprintf(f, "#\n# %s\n", intro);
        any = true;
        char line[512];
        snprintf(line, sizeof line, "%s=%s: %s", s->factor, level_of(s), s->why);
        comment(f, "#   ", line);
        const char *apply = json_string_value(json_object_get(s->rec, "apply"));
        if (apply != NULL)
            comment(f, "#     by hand: ", apply);
    }
}

/* The head every form opens with: where the advice comes from, the
 * evidence of each setting, usage (how to apply and roll back, comment
 * lines) and the settings the form leaves to a person, after intro. */
static void head(FILE *f, const struct advice *a, const char *form, const char *usage,
                 const char *intro)
{
    char line[512];
    snprintf(line, sizeof line, "hvbench plan %lld (%s): its recommendations as %s", a->plan,
             a->name, form);
    comment(f, "# ", line);
    if (a->partial)
        fputs("# The plan has not ended: this is the advice of a partial report.\n", f);
    if (a->n == 0)
        fputs("# The plan recommends nothing: no level beat its default.\n", f);
    for (size_t i = 0; i < a->n; i++) {
        fputs("#\n", f);
        evidence(f, &a->s[i]);
    }
    fputs("#\n", f);
    fputs(usage, f);
    manual(f, a, intro);
}

/* Whether a has a setting of kind k. */
static bool has(const struct advice *a, enum kind k)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->s[i].kind == k)
            return true;
    return false;
}

/* The lines of the file that keeps kind k's settings across reboots
 * (value: the level's, not the default's), each after indent:
 * systemd-tmpfiles "w" lines, udev rules, modprobe options. */
static void boot_lines(FILE *f, const struct advice *a, enum kind k, const char *indent)
{
    for (size_t i = 0; i < a->n; i++) {
        const struct setting *s = &a->s[i];
        if (s->kind != k)
            continue;
        if (k == K_FILE)
            fprintf(f, "%sw %s - - - - %s\n", indent, s->path, s->value);
        else if (k == K_DISK)
            fprintf(f,
                    "%sACTION==\"add|change\", SUBSYSTEM==\"block\", KERNEL==\"%s\", "
                    "ATTR{%s}=\"%s\"\n",
                    indent, a->disk, s->attr, s->value);
        else if (k == K_MODULE)
            fprintf(f, "%soptions %s %s=%s\n", indent, s->module, s->param, s->value);
    }
}

/** The file that keeps kind k's settings, under /etc. */
static void boot_file(const struct advice *a, enum kind k, char *buf, size_t len)
{
    if (k == K_FILE)
        snprintf(buf, len, "/etc/tmpfiles.d/%s.conf", a->slug);
    else if (k == K_DISK)
        snprintf(buf, len, "/etc/udev/rules.d/60-%s.rules", a->slug);
    else
        snprintf(buf, len, "/etc/modprobe.d/%s.conf", a->slug);
}

static const enum kind boot_kinds[] = {K_FILE, K_DISK, K_MODULE};
#define N_BOOT_KINDS (sizeof boot_kinds / sizeof boot_kinds[0])

/** What a form writes for one file that keeps settings of kind k: its path
 *  file, nth (from 1) of the files a needs. */
typedef void (*boot_fn)(FILE *f, const struct advice *a, enum kind k, const char *file, size_t nth);

/* Calls fn for each file a needs to keep its settings across reboots, in
 * the order of boot_kinds (the reverse with reverse, nth still counting
 * in that order). Returns how many. */
static size_t each_boot_file(FILE *f, const struct advice *a, bool reverse, boot_fn fn)
{
    enum kind kinds[N_BOOT_KINDS];
    size_t n = 0;
    for (size_t k = 0; k < N_BOOT_KINDS; k++)
        if (has(a, boot_kinds[k]))
            kinds[n++] = boot_kinds[k];
    for (size_t j = 0; j < n; j++) {
        size_t at = reverse ? n - 1 - j : j;
        char file[128];
        boot_file(a, kinds[at], file, sizeof file);
        fn(f, a, kinds[at], file, at + 1);
    }
    return n;
}

/* ---- tuned ----------------------------------------------------------- */

static void render_tuned(FILE *f, const struct advice *a)
{
    head(f, a, "a tuned profile",
         "# Install: save as /etc/tuned/PROFILE/tuned.conf, then tuned-adm profile PROFILE.\n"
         "# Rollback: tuned-adm profile PREVIOUS (the profile active before, e.g.\n"
         "# virtual-host): tuned writes back every [sysfs] value it changed when it\n"
         "# unloads the profile; [bootloader] lines leave the kernel command line at the\n"
         "# next boot. Then rm -r /etc/tuned/PROFILE.\n",
         "Not expressible in a tuned profile (apply them otherwise):");
    fprintf(f, "# PROFILE: %s\n", a->slug);
    fprintf(f, "\n[main]\nsummary=hvbench plan %lld: recommended host settings\n", a->plan);
    fputs("include=virtual-host\n", f);
    if (has(a, K_FILE) || has(a, K_DISK)) {
        fputs("\n[sysfs]\n", f);
        for (size_t i = 0; i < a->n; i++)
            if (a->s[i].kind == K_FILE || a->s[i].kind == K_DISK)
                fprintf(f, "%s=%s\n", a->s[i].path, a->s[i].value);
    }
    if (has(a, K_MODULE)) {
        /* A module parameter on the command line is set when the module
         * loads at boot, the only moment a reboot-class setting changes. */
        fputs("\n[bootloader]\n", f);
        fprintf(f, "cmdline_hvbench_plan_%lld=", a->plan);
        const char *sep = "";
        for (size_t i = 0; i < a->n; i++)
            if (a->s[i].kind == K_MODULE) {
                fprintf(f, "%s%s.%s=%s", sep, a->s[i].module, a->s[i].param, a->s[i].value);
                sep = " ";
            }
        fputs("\n", f);
    }
}

/* ---- Ansible --------------------------------------------------------- */

/* The head of a play (name, hosts, become, the root variable). */
static void play_head(FILE *f, const struct advice *a, const char *what, const char *tags)
{
    fprintf(f,
            "- name: \"hvbench plan %lld: %s\"\n"
            "  hosts: \"{{ hvbench_hosts | default('all') }}\"\n"
            "  become: \"{{ hvbench_become | default(true) }}\"\n"
            "  gather_facts: false\n",
            a->plan, what);
    if (tags != NULL)
        fprintf(f, "  tags: %s\n", tags);
    fputs("  vars:\n"
          "    # A prefix of every path written: empty on a host, a scratch tree in a test.\n"
          "    root: \"{{ hvbench_root | default('') }}\"\n"
          "  tasks:\n",
          f);
}

/* A task writing value to setting s's file now. */
static void ansible_write(FILE *f, const struct setting *s, const char *level, const char *value)
{
    fprintf(f,
            "    - name: \"%s=%s now\"\n"
            "      ansible.builtin.shell:\n"
            "        cmd: 'printf ''%%s\\n'' %s > {{ root | quote }}%s'\n"
            "      changed_when: true\n",
            s->factor, level, value, s->path);
}

/* A task writing a file that keeps settings at every boot. */
static void ansible_keep(FILE *f, const struct advice *a, enum kind k, const char *file, size_t nth)
{
    fprintf(f,
            "    - name: \"%s: the settings at every boot\"\n"
            "      ansible.builtin.copy:\n"
            "        dest: \"{{ root }}%s\"\n"
            "        mode: \"0644\"\n"
            "        content: |\n",
            file, file);
    boot_lines(f, a, k, "          ");
}

/* A task removing it. */
static void ansible_remove(FILE *f, const struct advice *a, enum kind k, const char *file,
                           size_t nth)
{
    fprintf(f,
            "    - name: \"%s removed\"\n"
            "      ansible.builtin.file:\n"
            "        path: \"{{ root }}%s\"\n"
            "        state: absent\n",
            file, file);
}

static void render_ansible(FILE *f, const struct advice *a)
{
    fputs("---\n", f);
    head(f, a, "an Ansible playbook (ansible.builtin modules only)",
         "# Apply: ansible-playbook -i INVENTORY THIS.yml (hosts: -e hvbench_hosts=GROUP).\n"
         "# Rollback: ansible-playbook -i INVENTORY THIS.yml --tags rollback: the plan's\n"
         "# default levels written back, the files below removed.\n",
         "Not applied by this playbook (apply them otherwise):");
    play_head(f, a, "apply the recommended settings", NULL);
    size_t tasks = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct setting *s = &a->s[i];
        if (s->kind == K_FILE || s->kind == K_DISK) {
            ansible_write(f, s, s->level, s->value);
            tasks++;
        }
    }
    tasks += each_boot_file(f, a, false, ansible_keep);
    if (has(a, K_MODULE)) {
        fputs("    - name: \"module parameters: effective when the module is reloaded\"\n"
              "      ansible.builtin.debug:\n"
              "        msg: \"stop every guest, then modprobe -r and modprobe the module (or "
              "reboot)\"\n",
              f);
        tasks++;
    }
    if (tasks == 0)
        fputs("    - name: \"nothing to apply\"\n"
              "      ansible.builtin.debug:\n"
              "        msg: \"the plan recommends no host setting\"\n",
              f);
    fputs("\n", f);
    play_head(f, a, "roll the recommended settings back", "[never, rollback]");
    for (size_t i = 0; i < a->n; i++) {
        const struct setting *s = &a->s[i];
        if (s->kind == K_FILE || s->kind == K_DISK)
            ansible_write(f, s, s->dflt, s->dvalue);
    }
    each_boot_file(f, a, false, ansible_remove);
    if (tasks == 0)
        fputs("    - name: \"nothing to roll back\"\n"
              "      ansible.builtin.debug:\n"
              "        msg: \"the plan recommends no host setting\"\n",
              f);
}

/* ---- Puppet ---------------------------------------------------------- */

/* The file resource of a file that keeps settings at every boot. */
static void puppet_file(FILE *f, const struct advice *a, enum kind k, const char *file, size_t nth)
{
    fprintf(f,
            "\n  file { \"${root}%s\":\n"
            "    ensure  => $file_ensure,\n"
            "    mode    => '0644',\n"
            "    content => @(EOT),\n",
            file);
    boot_lines(f, a, k, "      ");
    fputs("      | EOT\n  }\n", f);
}

static void render_puppet(FILE *f, const struct advice *a)
{
    head(f, a, "a Puppet manifest (core resource types only)",
         "# Apply: puppet apply THIS.pp. Rollback: FACTER_hvbench_ensure=absent puppet apply\n"
         "# THIS.pp (the plan's default levels written back, the files removed).\n"
         "# FACTER_hvbench_root=DIR prefixes every path (a scratch tree).\n",
         "Not applied by this manifest (apply them otherwise):");
    fprintf(f,
            "class hvbench_plan_%lld (\n"
            "  Enum['present', 'absent'] $ensure = 'present',\n"
            "  String $root = '',\n"
            ") {\n"
            "  $file_ensure = $ensure ? { 'present' => 'file', default => 'absent' }\n",
            a->plan);
    each_boot_file(f, a, false, puppet_file);
    for (size_t i = 0; i < a->n; i++) {
        const struct setting *s = &a->s[i];
        if (s->kind != K_FILE && s->kind != K_DISK)
            continue;
        char file[128];
        boot_file(a, s->kind, file, sizeof file);
        /* Written now whenever the file that keeps it changes: at the
         * first apply and at the rollback. */
        fprintf(f,
                "\n  $%s = $ensure ? { 'present' => '%s', default => '%s' }\n"
                "  exec { \"hvbench plan %lld: %s=${%s}\":\n"
                "    command     => ['/bin/sh', '-c', \"printf '%%s\\\\n' ${%s} > "
                "'${root}%s'\"],\n"
                "    refreshonly => true,\n"
                "    subscribe   => File[\"${root}%s\"],\n"
                "  }\n",
                s->factor, s->value, s->dvalue, a->plan, s->factor, s->factor, s->factor, s->path,
                file);
    }
    fprintf(f,
            "}\n\n"
            "class { 'hvbench_plan_%lld':\n"
            "  ensure => $facts['hvbench_ensure'] ? { 'absent' => 'absent', default => "
            "'present' },\n"
            "  root   => $facts['hvbench_root'] ? { undef => '', default => "
            "$facts['hvbench_root'] },\n"
            "}\n",
            a->plan);
}

/* ---- shell ----------------------------------------------------------- */

/* How many of a's settings are files written now (K_FILE, K_DISK): the
 * shell form saves them first, as 1..n. */
static size_t n_written(const struct advice *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        n += a->s[i].kind == K_FILE || a->s[i].kind == K_DISK;
    return n;
}

/* The lines writing a file that keeps settings at every boot, saved after
 * the files written now. */
static void shell_keep(FILE *f, const struct advice *a, enum kind k, const char *file, size_t nth)
{
    fprintf(f, "    save %zu %s\n    cat >\"$ROOT%s\" <<'EOF'\n", n_written(a) + nth, file, file);
    boot_lines(f, a, k, "");
    fputs("EOF\n", f);
}

/* The line putting it back. */
static void shell_restore(FILE *f, const struct advice *a, enum kind k, const char *file,
                          size_t nth)
{
    fprintf(f, "    restore %zu %s\n", n_written(a) + nth, file);
}

static void render_shell(FILE *f, const struct advice *a)
{
    fputs("#!/bin/sh\n", f);
    head(f, a, "a shell script",
         "# Usage: sh THIS.sh [apply|rollback]. apply keeps each file's bytes in\n"
         "# $STATE before changing it; rollback puts them back (a file under /sys gets\n"
         "# its value again) and removes $STATE. ROOT prefixes every path (a scratch\n"
         "# tree); module parameters take effect when the module is reloaded (every\n"
         "# guest stopped) or at the next boot.\n",
         "Not applied by this script (apply them otherwise):");
    fprintf(f,
            "set -eu\n"
            "ROOT=${ROOT:-}\n"
            "STATE=${STATE:-$ROOT/var/lib/hvbench/%s}\n"
            "\n"
            "# save N FILE: FILE's bytes (or that it is absent) as $STATE/N, once.\n"
            "save() {\n"
            "    [ -e \"$STATE/$1\" ] || [ -e \"$STATE/$1.absent\" ] && return 0\n"
            "    mkdir -p \"$STATE\"\n"
            "    if [ -e \"$ROOT$2\" ]; then cat \"$ROOT$2\" >\"$STATE/$1\"; else : "
            ">\"$STATE/$1.absent\"; fi\n"
            "}\n"
            "\n"
            "# put VALUE FILE: VALUE and a newline written to FILE, as echo does.\n"
            "put() {\n"
            "    printf '%%s\\n' \"$1\" >\"$ROOT$2\"\n"
            "}\n"
            "\n"
            "# restore N FILE: FILE as save N found it; a file under /sys gets back its\n"
            "# value (the bracketed choice where the kernel shows several).\n"
            "restore() {\n"
            "    if [ -e \"$STATE/$1.absent\" ]; then\n"
            "        rm -f \"$ROOT$2\"\n"
            "    elif [ -e \"$STATE/$1\" ]; then\n"
            "        case $2 in\n"
            "        /sys/*) put \"$(sed -n 's/.*\\[\\(.*\\)\\].*/\\1/p;t;p' \"$STATE/$1\" | head "
            "-n 1)\" \"$2\" ;;\n"
            "        *) cat \"$STATE/$1\" >\"$ROOT$2\" ;;\n"
            "        esac\n"
            "    fi\n"
            "}\n"
            "\n"
            "apply() {\n",
            a->slug);
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct setting *s = &a->s[i];
        if (s->kind == K_FILE || s->kind == K_DISK)
            fprintf(f, "    save %zu %s\n    put %s %s\n", ++n, s->path, s->value, s->path);
    }
    n += each_boot_file(f, a, false, shell_keep);
    if (n == 0)
        fputs("    : nothing to apply\n", f);
    fputs("}\n\nrollback() {\n", f);
    /* In the reverse order of apply, each file by the number it was saved
     * under. */
    each_boot_file(f, a, true, shell_restore);
    size_t m = n_written(a);
    for (size_t i = a->n; i-- > 0;) {
        const struct setting *s = &a->s[i];
        if (s->kind == K_FILE || s->kind == K_DISK)
            fprintf(f, "    restore %zu %s\n", m--, s->path);
    }
    fputs("    rm -rf \"$STATE\"\n}\n\n"
          "case ${1:-apply} in\n"
          "apply) apply ;;\n"
          "rollback) rollback ;;\n"
          "*)\n"
          "    echo \"usage: $0 [apply|rollback]\" >&2\n"
          "    exit 2\n"
          "    ;;\n"
          "esac\n",
          f);
}

/* ---- the forms ------------------------------------------------------- */

struct form {
    const char *name, *media_type;
    void (*render)(FILE *f, const struct advice *a);
};

static const struct form forms[] = {
    {"tuned", "text/plain; charset=utf-8", render_tuned},
    {"ansible", "application/yaml; charset=utf-8", render_ansible},
    {"puppet", "text/plain; charset=utf-8", render_puppet},
    {"shell", "text/x-shellscript; charset=utf-8", render_shell},
};

#define N_FORMS (sizeof forms / sizeof forms[0])

const char *const hv_advice_formats[] = {"tuned", "ansible", "puppet", "shell", NULL};

static const struct form *form_of(const char *name)
{
    for (size_t i = 0; name != NULL && i < N_FORMS; i++)
        if (strcmp(forms[i].name, name) == 0)
            return &forms[i];
    return NULL;
}

const char *hv_advice_media_type(const char *name)
{
    const struct form *m = form_of(name);
    return m != NULL ? m->media_type : NULL;
}

char *hv_advice_render(const json_t *report, const char *disk, const char *name)
{
    const struct form *m = form_of(name);
    if (m == NULL)
        return NULL;
    struct advice a;
    if (advice_read(report, disk, &a) != 0)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f != NULL) {
        m->render(f, &a);
        if (fclose(f) != 0) {
            free(text);
            text = NULL;
        }
    }
    free(a.s);
    return text;
}
