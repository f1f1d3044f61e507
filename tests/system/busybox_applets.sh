# Run by Debian's busybox sh on Toll (tests/system/busybox_check.py --applets):
# one line "R name value" per check; the harness knows what each must say.
cd /tmp || exit 1
echo "R uname $(uname -s -m)"
echo "R id $(id)"
echo "R sha256 $(sha256sum /data/blob | cut -d' ' -f1)"
echo "R wc $(wc -c </data/blob) $(wc -l </data/lines) $(cat /data/lines | wc -w)"
echo "R cat $(cat /data/lines | sha256sum | cut -d' ' -f1)"
dd if=/data/blob of=/tmp/copy bs=4096 2>/dev/null
echo "R dd $(sha256sum /tmp/copy | cut -d' ' -f1) $(stat -c %s /tmp/copy)"
dd if=/data/blob bs=4096 skip=3 count=2 2>/dev/null >/tmp/part
echo "R dd_skip $(sha256sum </tmp/part | cut -d' ' -f1)"
mkdir -p /tmp/a/b/c && touch /tmp/a/b/c/f
echo "R mkdir $(ls /tmp/a/b/c)"
echo hello >/tmp/a/h
echo world >>/tmp/a/h
echo "R redirect $(cat /tmp/a/h | tr '\n' ' ')"
ls /no/such 2>/tmp/a/err >/dev/null
echo "R append_stderr $(wc -l </tmp/a/err) err"
rm /tmp/a/err
mv /tmp/a/h /tmp/a/g
echo "R mv $(ls /tmp/a | grep -v b)"
ln /tmp/a/g /tmp/a/hard
ln -s g /tmp/a/soft
echo "R ln $(head -1 /tmp/a/soft) $(stat -c %h /tmp/a/g) $(readlink /tmp/a/soft)"
rmdir /tmp/a/b 2>/dev/null
echo "R rmdir_nonempty $?"
rm -r /tmp/a/b
echo "R rm $(ls /tmp/a | tr '\n' ' ')"
sh -c 'false | true; a=$?; true | false; b=$?; sh -c "exit 7"; echo $a $b $?' >/tmp/status
echo "R pipe_status $(cat /tmp/status)"
echo "R pipe_three $(printf 'x\ny\nz\n' | cat | wc -l)"
echo "R ps $(ps | awk 'NR > 1 && $1 > 0 { n++ } END { print (n >= 1) }')"
echo "R ps_o $(ps -o pid,ppid,vsz,stat,comm | awk '$5 == "ps" && $2 > 0 && $3 != "0" && $4 ~ /^R/ { n++ } END { print n }')"
echo "R maps $(grep -c ' r-xp .* /bin/busybox$' /proc/self/maps) $(grep -c ' rw-p .* \[stack\]$' /proc/self/maps)"
echo "R fd $(ls -l /proc/self/fd 2>/dev/null | grep -c '^l-wx------ .* 1 -> pipe:\[[0-9]*\]$') $(readlink /proc/self/fd/0)"
echo "R top $(top -b -n 1 | grep -c '^Mem:')"
echo "R free $(free | grep -c '^Mem:')"
echo "R df $(df / | tail -1 | awk '{print $6}')"
echo "R mount $(mount | head -1)"
echo "R uptime $(uptime | grep -c 'up')"
head -c 5000 /data/blob >/tmp/t
truncate -s 0 /tmp/a/g
echo "R truncate $(stat -c %s /tmp/t) $(stat -c %s /tmp/a/hard)"
printf 'c\na\nb\n' >/tmp/s
echo "R sort $(sort /tmp/s | tr '\n' ' ')"
cd /tmp/a && echo "R cwd $(pwd)"
echo "R ping $(ping -c 1 -W 2 127.0.0.1 2>&1 | grep -c '1 packets transmitted, 1 packets received')"
