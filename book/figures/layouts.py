"""The three i386 address-space layouts: 3/1, 3/1-pti and 4/4, each as the
page directories in use, from 0 to 4 GB, kernel and user mode."""

from figstyle import COLOURS, plt, save

GB = 1 << 30
TRAMP = 0xFFC00000
# (title, [(column label, [(start, end, kind, text)])])
layouts = [
    ("3/1", [("user and kernel mode", [(0, 3 * GB, "user", "user\n3 GB"),
                                       (3 * GB, TRAMP, "kernel", "kernel\n(global pages)"),
                                       (TRAMP, 4 * GB, "tramp", "")])]),
    ("3/1-pti", [("kernel mode", [(0, 3 * GB, "user", "user"),
                                  (3 * GB, TRAMP, "kernel", "kernel"),
                                  (TRAMP, 4 * GB, "tramp", "")]),
                 ("user mode", [(0, 3 * GB, "user", "user"),
                                (TRAMP, 4 * GB, "tramp", "")])]),
    ("4/4", [("kernel mode", [(0, 3 * GB, "kernel", "memory above\n896 MB"),
                              (3 * GB, TRAMP, "kernel", "kernel"),
                              (TRAMP, 4 * GB, "tramp", "")]),
             ("user mode", [(0, TRAMP, "user", "user\n4 GB - 4 MB"),
                            (TRAMP, 4 * GB, "tramp", "")])]),
]
fig, axes = plt.subplots(1, 3, figsize=(7.4, 4.4), sharey=True)
for ax, (title, columns) in zip(axes, layouts):
    for i, (label, regions) in enumerate(columns):
        for start, end, kind, text in regions:
            height = max(end - start, 0.06 * GB)  # The 4 MB slot, drawn visible.
            ax.bar(i, height / GB, bottom=start / GB if kind != "tramp" else 4 - height / GB,
                   width=0.8, color=COLOURS[kind], edgecolor="white")
            if text:
                ax.text(i, (start + end) / 2 / GB, text, ha="center", va="center",
                        fontsize=8, color="white")
        ax.text(i, 4.03, "trampoline", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels([c[0] for c in columns], fontsize=8)
    ax.set_xlim(-0.6, 1.6)
    ax.set_title(f"vm.split={title}", fontsize=10)
axes[0].set_ylabel("virtual address (GB)")
axes[0].set_yticks([0, 1, 2, 3, 4])
axes[0].set_ylim(0, 4.25)
fig.tight_layout()
save(fig)
