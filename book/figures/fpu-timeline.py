"""FPU ownership over time under lazy and eager switching: process A uses
SSE, process B does not. Lazy: the switch sets CR0.TS; A's first FPU
instruction after it traps (#NM) and restores. Eager: save and restore at
the switch, no trap."""

from figstyle import COLOURS, plt, save

fig, axes = plt.subplots(2, 1, figsize=(9, 3.8), sharex=True)
slices = [("A", 0, 3), ("B", 3, 6), ("A", 6, 9), ("B", 9, 12)]
for ax, mode in zip(axes, ("lazy", "eager")):
    for who, start, end in slices:
        ax.broken_barh([(start, end - start)], (0.6, 0.8),
                       color=COLOURS["user"] if who == "A" else "#cccccc")
        ax.text((start + end) / 2, 1.0, f"{who} runs", ha="center", va="center", fontsize=8)
    for _, start, _ in slices[1:]:
        ax.axvline(start, color="black", linewidth=0.8)
    if mode == "lazy":
        for s in (3, 6, 9):
            ax.annotate("switch: set CR0.TS", (s, 1.45), (s + 0.1, 1.9), fontsize=7)
        ax.annotate("#NM: clear TS,\nFXRSTOR A", (6.5, 0.6), (6.6, -0.25), fontsize=7,
                    arrowprops={"arrowstyle": "->"})
        ax.annotate("FXSAVE A\n(A leaves)", (3, 0.6), (1.2, -0.25), fontsize=7,
                    arrowprops={"arrowstyle": "->"})
        ax.text(3.2, 0.2, "B never traps:\nno FPU use", fontsize=7)
        ax.set_title("lazy (fpu.switch=lazy): the owner stays in the FPU until someone else needs it",
                     fontsize=9, loc="left")
    else:
        for s, text in ((3, "FXSAVE A"), (6, "FXRSTOR A"), (9, "FXSAVE A")):
            ax.annotate(text + "\nat the switch", (s, 0.6), (s + 0.1, -0.25), fontsize=7,
                        arrowprops={"arrowstyle": "->"})
        ax.set_title("eager (fpu.switch=eager): state moves at the switch, no trap",
                     fontsize=9, loc="left")
    ax.set_ylim(-0.4, 2.2)
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)
axes[-1].set_xlabel("time (context switches at the vertical lines)")
axes[-1].set_xticks([])
fig.tight_layout()
save(fig)
