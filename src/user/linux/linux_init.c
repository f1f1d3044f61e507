/* linux_init: the /init of the initramfs with which tools/bench boots Debian's
 * i386 Linux kernel, so that Toll's own benchmark programs (the very same
 * static binaries) run on Linux under the same emulator flags.
 *
 * It mounts sysfs, prints the kernel's page-table-isolation state, then runs
 * each line of /suite ("<name> <program> <arguments...>") as
 * /bin/<program> <arguments...>, one after the other, bracketed by
 * "LINUX-BENCH <name>" and "LINUX-EXIT <name> <status>" lines, and powers the
 * machine off. Not part of Toll's ramdisk: it only makes sense as Linux's
 * first process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

enum { k_max_line = 512, k_max_args = 32 };

/* Prints what /sys says about Meltdown: "Mitigation: PTI" or "Vulnerable". */
static void print_isolation(void)
{
    char text[128] = "unknown";
    FILE* f = fopen("/sys/devices/system/cpu/vulnerabilities/meltdown", "r");
    if (f) {
        if (!fgets(text, sizeof text, f))
            strcpy(text, "unreadable");
        fclose(f);
    }
    text[strcspn(text, "\n")] = '\0';
    printf("LINUX-PTI %s\n", text);
}

/* Runs one suite line; returns its wait status, or -1 if it could not start. */
static int run_line(char* line)
{
    char* argv[k_max_args + 1];
    int argc = 0;
    for (char* word = strtok(line, " \t\n"); word && argc < k_max_args;
         word = strtok(NULL, " \t\n"))
        argv[argc++] = word;
    if (argc < 2)
        return -1;
    argv[argc] = NULL;
    printf("LINUX-BENCH %s\n", argv[0]);
    fflush(stdout);
    char path[128];
    snprintf(path, sizeof path, "/bin/%s", argv[1]);
    pid_t pid = fork();
    if (pid == 0) {
        execv(path, argv + 1);
        _exit(127);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

int main(void)
{
    mount("sysfs", "/sys", "sysfs", 0, NULL);
    print_isolation();
    FILE* suite = fopen("/suite", "r");
    if (!suite) {
        printf("LINUX-ERROR no /suite\n");
    } else {
        char line[k_max_line];
        while (fgets(line, sizeof line, suite)) {
            char name[k_max_line];
            if (sscanf(line, "%s", name) != 1)
                continue;
            int status = run_line(line);
            printf("LINUX-EXIT %s %d\n", name, status);
            fflush(stdout);
        }
        fclose(suite);
    }
    printf("LINUX-DONE\n");
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 1;
}
