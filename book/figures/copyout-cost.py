"""Instructions per read() against bytes per read: 3/1, and 4/4's two copy paths.
Linear axes, because the costs grow linearly; the crossover of the two 4/4
paths and the default fast-path limit (vm.copy_fast_max, 256 bytes) marked."""

from figstyle import COLOURS, plt, rows, save

data = {}
for r in rows("copyout.csv"):
    data.setdefault(r["configuration"], []).append((int(r["bytes"]), int(r["instructions_per_read"])))

fig, (ax, zoom) = plt.subplots(1, 2, figsize=(7.4, 3.6), gridspec_kw={"width_ratios": [3, 2]})
for name, points in data.items():
    xs, ys = zip(*sorted(points))
    for a in (ax, zoom):
        a.plot(xs, ys, marker="o", markersize=3, label=name, color=COLOURS.get(name))

fast, slow = dict(data["4/4 fast"]), dict(data["4/4 slow"])
sizes = sorted(set(fast) & set(slow))
cross = None
for a, b in zip(sizes, sizes[1:]):
    if fast[a] <= slow[a] and fast[b] > slow[b]:
        # Linear interpolation between the two measured sizes around the crossing.
        da, db = slow[a] - fast[a], fast[b] - slow[b]
        cross = a + (b - a) * da / (da + db)
for a in (ax, zoom):
    a.axvline(256, color="black", linestyle="--", linewidth=1)
    if cross:
        a.axvline(cross, color=COLOURS["4/4 fast"], linestyle=":", linewidth=1)
    a.set_xlabel("bytes per read()")
ax.set_ylabel("instructions per read()")
ax.set_title("all sizes")
ax.text(256, ax.get_ylim()[1] * 0.95, " default limit\n 256 bytes", va="top", fontsize=8)
zoom.set_xlim(0, 520)
zoom.set_ylim(300, max(fast[s] for s in sizes if s <= 512) * 1.05)
zoom.set_title("the decision region, 0-512 bytes")
if cross:
    # Labelled in the panel whose x range holds it, so that no text leaves the figure.
    where = zoom if cross <= zoom.get_xlim()[1] else ax
    where.text(cross, where.get_ylim()[1] * 0.80, f" crossover\n about {cross:.0f} bytes",
               va="top", fontsize=8, color=COLOURS["4/4 fast"])
ax.legend(frameon=False)
fig.tight_layout()
save(fig)
