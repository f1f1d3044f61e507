"""FPU ownership over four time slices under lazy and under eager switching:
process A uses SSE, process B does not. Both save A's state at every switch
away from its owner and drop the ownership (switch_threads in
src/arch/i386/fpu/fpu.cpp). They differ in the restore: lazy sets CR0.TS and
restores at A's first FPU instruction, in the #NM handler; eager restores at
the switch itself, with no trap."""

from figstyle import COLOURS, plt, save

SLICES = [("A", 0, 3), ("B", 3, 6), ("A", 6, 9), ("B", 9, 12)]
# Who owns the FPU (whose state the registers hold for the kernel), per mode.
# (start, end) of each stretch of ownership.
OWNER = {"lazy": [(0, 3), (6.6, 9)], "eager": [(0, 3), (6, 9)]}

fig, axes = plt.subplots(2, 1, figsize=(7.4, 4.6), sharex=True)
for ax, mode in zip(axes, ("lazy", "eager")):
    for who, start, end in SLICES:
        ax.broken_barh([(start, end - start)], (1.5, 0.7),
                       color=COLOURS["user"] if who == "A" else "#cccccc")
        ax.text((start + end) / 2, 1.85, f"{who} runs", ha="center", va="center", fontsize=9,
                color="white" if who == "A" else "black")
    ax.broken_barh([(a, b - a) for a, b in OWNER[mode]], (0.6, 0.5), color=COLOURS["kernel"])
    for start, end in OWNER[mode]:
        ax.text((start + end) / 2, 0.85, "FPU owner: A", ha="center", va="center", fontsize=8)
    for _, start, _ in SLICES[1:]:
        ax.axvline(start, color="black", linewidth=0.8)
    ax.text(-0.1, 1.85, "CPU", ha="right", va="center", fontsize=8)
    ax.text(-0.1, 0.85, "FPU", ha="right", va="center", fontsize=8)
    for s in (3, 9):
        ax.text(s + 0.08, 2.35, "FXSAVE A,\nno owner", fontsize=8, va="bottom")
    if mode == "lazy":
        ax.text(6.08, 2.35, "set CR0.TS\n(nothing to save)", fontsize=8, va="bottom")
        ax.annotate("A's first SSE\ninstruction: #NM,\nclear TS, FXRSTOR A", (6.6, 0.6),
                    (6.7, -0.75), fontsize=8, arrowprops={"arrowstyle": "->"})
        ax.text(3.1, -0.6, "B never traps:\nit uses no FPU", fontsize=8)
        ax.set_title("lazy: saved when the owner leaves, restored at its first FPU "
                     "instruction (#NM)", fontsize=9, loc="left", pad=34)
    else:
        ax.text(6.08, 2.35, "FXRSTOR A\nat the switch", fontsize=8, va="bottom")
        ax.text(3.1, -0.6, "B: CR0.TS set,\nno restore", fontsize=8)
        ax.set_title("eager: saved when the owner leaves, restored at the switch, "
                     "no trap", fontsize=9, loc="left", pad=34)
    ax.set_ylim(-0.9, 2.3)
    ax.set_xlim(-0.9, 12)
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)
axes[-1].set_xlabel("time: the vertical lines are context switches", fontsize=9)
axes[-1].set_xticks([])
fig.tight_layout()
save(fig)
