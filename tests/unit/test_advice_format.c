/* test_advice_format.c — a report's recommendations as a tuned profile,
 * Ansible playbook, Puppet manifest and shell script (lib/advice_format.h):
 * every kind of setting the catalogue has (a host file, a file of the
 * plan's disk, a reboot-class module parameter, a domain setting, a site
 * factor), one level per factor, the evidence and rollback as comments,
 * and nothing of the report outside a comment but the catalogue's levels.
 * The real tools check the same forms in tests/integration/test_advice.sh. */
#include "advice_format.h"
#include "factors.h"

#include "tests/unit/check.h"

/* A report as the server writes it, cut to what the renderers read: thp
 * never (rank 1) and madvise (rank 4, a lower level of the same factor),
 * ksm on, io_scheduler bfq, kvm_ept off, disk_cache none, a site factor,
 * and a halt_poll_ns level no catalogue accepts. The plan's name tries to
 * end the comment it is written in. */
static const char *const REPORT =
    "{\"plan_id\": 7, \"name\": \"tune\\ninjected: true\", \"partial\": false,"
    " \"recommendations\": ["
    "  {\"rank\": 1, \"factor\": \"thp\", \"level\": \"never\", \"default\": \"always\","
    "   \"gains\": [{\"sentence\": \"cpu score in the guests +5.0 % [+3.9, +6.1] (n = 6 "
    "rounds)\"}],"
    "   \"hurts\": [], \"risk_level\": \"low\", \"risk\": \"always can add latency spikes\","
    "   \"disruption\": \"host\", \"apply\": \"echo always > "
    "/sys/kernel/mm/transparent_hugepage/enabled\"},"
    "  {\"rank\": 2, \"factor\": \"ksm\", \"level\": \"on\", \"default\": \"off\","
    "   \"gains\": [{\"sentence\": \"memory +2.0 % [+1.0, +3.0] (n = 6 rounds)\"}], \"hurts\": [],"
    "   \"risk_level\": \"low\", \"risk\": null, \"disruption\": \"host\"},"
    "  {\"rank\": 3, \"factor\": \"io_scheduler\", \"level\": \"bfq\", \"default\": "
    "\"mq-deadline\", \"gains\": [], \"hurts\": [{\"sentence\": \"disk latency +1 %\"}],"
    "   \"risk_level\": \"low\", \"disruption\": \"host\"},"
    "  {\"rank\": 4, \"factor\": \"thp\", \"level\": \"madvise\", \"default\": \"always\"},"
    "  {\"rank\": 5, \"factor\": \"kvm_ept\", \"level\": \"off\", \"default\": \"on\","
    "   \"risk_level\": \"availability\", \"disruption\": \"reboot\"},"
    "  {\"rank\": 6, \"factor\": \"disk_cache\", \"level\": \"none\", \"default\": "
    "\"writeback\", \"apply\": \"XML: <driver name='qemu' type='raw' cache='none'/> in the "
    "<disk>; virsh edit DOMAIN, then restart\", \"disruption\": \"restart\"},"
    "  {\"rank\": 7, \"factor\": \"site.zfs_sync\", \"level\": \"disabled\", \"default\": "
    "\"standard\"},"
    "  {\"rank\": 8, \"factor\": \"halt_poll_ns\", \"level\": \"1; rm -rf /\", \"default\": "
    "\"200000\"}"
    "]}";

/* Whether some line of text that is not a comment (after blanks, not
 * '#') contains needle. */
static bool in_code(const char *text, const char *needle)
{
    const char *line = text;
    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
        const char *p = line;
        while (p < line + len && (*p == ' ' || *p == '\t'))
            p++;
        if (*p != '#') {
            char *copy = strndup(line, len);
            bool hit = copy != NULL && strstr(copy, needle) != NULL;
            free(copy);
            if (hit)
                return true;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return false;
}

/* Checks what every form shares on text: the evidence, the settings no form
 * applies, the lower ranked level and the refused one left out of the
 * code, the name kept inside its comment. */
static void check_common(const char *form, const char *text)
{
    CHECK_MSG(strstr(text, "# hvbench plan 7 (tune?injected: true)") != NULL, "%s: head", form);
    CHECK_MSG(strstr(text, "\ninjected") == NULL, "%s: a name ends no comment", form);
    CHECK_MSG(strstr(text, "# thp=never (rank 1; the plan's default: always)") != NULL,
              "%s: the evidence of thp", form);
    CHECK_MSG(strstr(text, "#   gain: cpu score in the guests +5.0 % [+3.9, +6.1] (n = 6 "
                           "rounds)") != NULL,
              "%s: the gain with its interval", form);
    CHECK_MSG(strstr(text, "#   hurts: disk latency +1 %") != NULL, "%s: what it hurts", form);
    CHECK_MSG(strstr(text, "#   risk: low: always can add latency spikes") != NULL, "%s: risk",
              form);
    CHECK_MSG(strstr(text, "#   rollback: thp=always") != NULL, "%s: the rollback", form);
    CHECK_MSG(strstr(text, "disk_cache=none: a setting of each guest domain") != NULL,
              "%s: a domain setting is a comment", form);
    CHECK_MSG(strstr(text, "#     by hand: XML: <driver name='qemu' type='raw' cache='none'/>") !=
                  NULL,
              "%s: with its apply hint", form);
    CHECK_MSG(strstr(text, "site.zfs_sync=disabled: a factor the catalogue does not know") != NULL,
              "%s: a site factor is a comment", form);
    CHECK_MSG(strstr(text, "halt_poll_ns=1; rm -rf /: a level the catalogue does not accept") !=
                  NULL,
              "%s: a refused level is a comment", form);
    CHECK_MSG(!in_code(text, "rm -rf /"), "%s: a refused level stays in its comment", form);
    CHECK_MSG(!in_code(text, "madvise"), "%s: one level per factor", form);
    CHECK_MSG(!in_code(text, "disk_cache") && !in_code(text, "zfs"),
              "%s: no code for what it cannot express", form);
}

static char *render(const json_t *report, const char *disk, const char *form)
{
    char *text = hv_advice_render(report, disk, form);
    CHECK_MSG(text != NULL, "%s renders", form);
    return text != NULL ? text : strdup("");
}

int main(void)
{
    json_t *report = check_json(REPORT);

    /* The written values come from the catalogue. */
    CHECK_STR(hv_factor_host_value(hv_factor_find("ksm"), "on"), "1");
    CHECK_STR(hv_factor_host_value(hv_factor_find("ksm"), "off"), "0");
    CHECK_STR(hv_factor_host_value(hv_factor_find("kvm_ept"), "off"), "0");
    CHECK_STR(hv_factor_host_value(hv_factor_find("thp"), "never"), "never");
    CHECK_STR(hv_factor_host_value(hv_factor_find("halt_poll_ns"), "50000"), "50000");

    CHECK(hv_advice_render(report, "sda", "chef") == NULL);
    CHECK(hv_advice_media_type("chef") == NULL);
    CHECK_STR(hv_advice_media_type("shell"), "text/x-shellscript; charset=utf-8");
    CHECK_STR(hv_advice_media_type("ansible"), "application/yaml; charset=utf-8");

    char *sh = render(report, "/dev/sda", "shell");
    check_common("shell", sh);
    CHECK(strncmp(sh, "#!/bin/sh\n", 10) == 0);
    CHECK(strstr(sh, "\nset -eu\nROOT=${ROOT:-}\n") != NULL);
    CHECK(strstr(sh, "    save 1 /sys/kernel/mm/transparent_hugepage/enabled\n"
                     "    put never /sys/kernel/mm/transparent_hugepage/enabled\n") != NULL);
    CHECK(strstr(sh, "    put 1 /sys/kernel/mm/ksm/run\n") != NULL);
    CHECK(strstr(sh, "    put bfq /sys/block/sda/queue/scheduler\n") != NULL);
    CHECK(strstr(sh, "w /sys/kernel/mm/ksm/run - - - - 1\n") != NULL);
    CHECK(strstr(sh, "ACTION==\"add|change\", SUBSYSTEM==\"block\", KERNEL==\"sda\", "
                     "ATTR{queue/scheduler}=\"bfq\"\n") != NULL);
    CHECK(strstr(sh, "    save 6 /etc/modprobe.d/hvbench-plan-7.conf\n") != NULL);
    CHECK(strstr(sh, "options kvm_intel ept=0\n") != NULL);
    /* The rollback undoes in reverse, each file by the number it was saved
     * under. */
    CHECK(strstr(sh, "rollback() {\n    restore 6 /etc/modprobe.d/hvbench-plan-7.conf\n"
                     "    restore 5 /etc/udev/rules.d/60-hvbench-plan-7.rules\n"
                     "    restore 4 /etc/tmpfiles.d/hvbench-plan-7.conf\n"
                     "    restore 3 /sys/block/sda/queue/scheduler\n"
                     "    restore 2 /sys/kernel/mm/ksm/run\n"
                     "    restore 1 /sys/kernel/mm/transparent_hugepage/enabled\n") != NULL);

    char *tuned = render(report, "sda", "tuned");
    check_common("tuned", tuned);
    CHECK(strstr(tuned, "\n[main]\nsummary=hvbench plan 7: recommended host settings\n"
                        "include=virtual-host\n") != NULL);
    CHECK(strstr(tuned, "\n[sysfs]\n/sys/kernel/mm/transparent_hugepage/enabled=never\n"
                        "/sys/kernel/mm/ksm/run=1\n/sys/block/sda/queue/scheduler=bfq\n") != NULL);
    CHECK(strstr(tuned, "\n[bootloader]\ncmdline_hvbench_plan_7=kvm_intel.ept=0\n") != NULL);
    CHECK(strstr(tuned, "# Not expressible in a tuned profile") != NULL);

    char *yml = render(report, "sda", "ansible");
    check_common("ansible", yml);
    CHECK(strncmp(yml, "---\n", 4) == 0);
    CHECK(strstr(yml, "cmd: 'printf ''%s\\n'' never > {{ root | quote "
                      "}}/sys/kernel/mm/transparent_hugepage/enabled'") != NULL);
    CHECK(strstr(yml, "dest: \"{{ root }}/etc/tmpfiles.d/hvbench-plan-7.conf\"") != NULL);
    CHECK(strstr(yml, "  tags: [never, rollback]\n") != NULL);
    CHECK(strstr(yml, "cmd: 'printf ''%s\\n'' always > {{ root | quote "
                      "}}/sys/kernel/mm/transparent_hugepage/enabled'") != NULL);
    CHECK(strstr(yml, "path: \"{{ root }}/etc/modprobe.d/hvbench-plan-7.conf\"\n"
                      "        state: absent\n") != NULL);
    /* Every module is one of ansible.builtin's. */
    for (const char *p = strstr(yml, "ansible."); p != NULL; p = strstr(p + 1, "ansible."))
        CHECK_MSG(strncmp(p, "ansible.builtin", 15) == 0, "a module outside ansible.builtin: %.40s",
                  p);

    char *pp = render(report, "sda", "puppet");
    check_common("puppet", pp);
    CHECK(strstr(pp, "class hvbench_plan_7 (\n") != NULL);
    CHECK(strstr(pp, "  $thp = $ensure ? { 'present' => 'never', default => 'always' }\n") != NULL);
    CHECK(strstr(pp, "  $ksm = $ensure ? { 'present' => '1', default => '0' }\n") != NULL);
    CHECK(strstr(pp, "  file { \"${root}/etc/modprobe.d/hvbench-plan-7.conf\":") != NULL);
    CHECK(strstr(pp, "subscribe   => File[\"${root}/etc/udev/rules.d/60-hvbench-plan-7.rules\"]") !=
          NULL);

    /* Without the plan's disk, a disk setting is a comment. */
    char *nodisk = render(report, NULL, "shell");
    CHECK(strstr(nodisk, "io_scheduler=bfq: a setting of the plan's disk, and the plan names no "
                         "disk (tuning.disk)") != NULL);
    CHECK(!in_code(nodisk, "scheduler"));
    char *baddisk = render(report, "sd$(reboot)", "shell");
    CHECK(!in_code(baddisk, "reboot"));

    /* A plan without recommendations still gives a form that does nothing. */
    json_t *empty = check_json("{\"plan_id\": 8, \"name\": \"idle\", \"recommendations\": []}");
    char *none = render(empty, NULL, "shell");
    CHECK(strstr(none, "# The plan recommends nothing") != NULL);
    CHECK(strstr(none, "apply() {\n    : nothing to apply\n}") != NULL);
    char *none_yml = render(empty, NULL, "ansible");
    CHECK(strstr(none_yml, "nothing to roll back") != NULL);

    free(sh);
    free(tuned);
    free(yml);
    free(pp);
    free(nodisk);
    free(baddisk);
    free(none);
    free(none_yml);
    json_decref(empty);
    json_decref(report);
    return check_summary("advice_format");
}
