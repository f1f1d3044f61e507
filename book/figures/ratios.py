"""Toll's 4/4-against-3/1 ratios beside the ones measured on hardware in the
mailing-list threads (4x, 6x, 25x). Toll's bars come from results.csv."""

from figstyle import COLOURS, plt, results, save

r = results()
# (label, Toll's metric or None, the hardware ratio quoted from the thread)
pairs = [("5-byte write\n(netblast: 4x)", "bw_null.5", 537 / 136),
         ("5-byte /dev/zero read\n(6x)", "bw_zero.5", 6),
         ("pipe round trip\n(tinygram pipe: 25x)", "lat_pipe.roundtrip", 25)]
fig, ax = plt.subplots(figsize=(7.2, 3.6))
xs = range(len(pairs))
toll = [r[("4/4", m)] / r[("3/1", m)] for _, m, _ in pairs]
seed = [s for _, _, s in pairs]
ax.bar([x - 0.2 for x in xs], toll, width=0.4, color=COLOURS["4/4"],
       label="Toll, instructions (deterministic mode)")
ax.bar([x + 0.2 for x in xs], seed, width=0.4, color=COLOURS["seed"],
       label="FreeBSD on hardware, time (Evans 2018)")
for x, t, s in zip(xs, toll, seed):
    ax.text(x - 0.2, t, f"{t:.2f}x", ha="center", va="bottom", fontsize=8)
    ax.text(x + 0.2, s, f"{s:.0f}x", ha="center", va="bottom", fontsize=8)
ax.set_xticks(list(xs))
ax.set_xticklabels([p[0] for p in pairs])
ax.set_ylabel("4/4 cost / 3/1 cost")
ax.set_yscale("log")
ax.axhline(1, color="black", linewidth=0.8)
ax.legend(frameon=False, loc="upper left")
fig.tight_layout()
save(fig)
