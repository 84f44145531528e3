#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Everything user nobody can try on the daemon's bus objects, on a real
dbus-daemon enforcing the shipped policy: only reading and
receiving are allowed.

Methods: a strict table, one row per (object, interface, method) with the
expected outcome for nobody. The daemon is introspected (as nobody: allowed)
and every method it offers must have a row, and every row a method: a method
added to the vtable without a row here fails this test. Each row is tried
through all three names of the daemon's connection (org.freedesktop.
vmpressure1, org.freedesktop.LowMemoryMonitor and its unique name), since
bus policy rules match every name the recipient owns. "denied" means refused
by the bus itself (AccessDenied "Rejected send message" from dbus-daemon,
"Sender is not authorized to send message" from dbus-broker), not only by
the daemon's own euid check.

Properties: a generic rule, so that properties added later are covered
without a row: for every property introspected, Get is allowed, Set is
denied (the value Set is given is the one Get returned, so only the policy
can refuse it), and GetAll is allowed.

Names: RequestName of both names, with and without REPLACE_EXISTING, is
denied.

Signals: the introspected signals (a strict table again) forged from a
nobody connection, broadcast and sent to each receiver's unique name. The
receivers: a naive one (dbus-python, root, matching on the interface only,
no sender), the sd-bus client (matching on the sender name) and a real
Gio.MemoryMonitor. None of them gets anything from nobody (and the unicast
ones come back AccessDenied from dbus-daemon; dbus-broker never answers a
signal). A LowMemoryWarning(255) forged by root from
another connection (the policy cannot stop root) reaches the naive receiver,
which shows it would have seen the others, but not GLib, whose proxy checks
the sender. Then a real page-cache load: the daemon's LOW reaches all three,
GLib's as low-memory-warning 50."""

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

ALLOWED, DENIED = "allowed", "denied"
PROPS = "org.freedesktop.DBus.Properties"
PEER = "org.freedesktop.DBus.Peer"
INTRO = "org.freedesktop.DBus.Introspectable"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"

# (object path, interface, method) -> (signature, arguments, nobody may call it)
# Properties.Get and .Set are not here: the generic property rule covers them.
METHODS = {
    (vb.PATH, vb.IFACE, "ListPolicies"): ("", [], ALLOWED),
    (vb.PATH, vb.IFACE, "Subscribe"): ("u", [1 << 10], ALLOWED),
    (vb.PATH, vb.IFACE, "Reload"): ("", [], DENIED),
    (vb.PATH, vb.IFACE, "Simulate"): ("ss", ["oom", ""], DENIED),
    (vb.PATH, PROPS, "GetAll"): ("s", [vb.IFACE], ALLOWED),
    (vb.PATH, INTRO, "Introspect"): ("", [], ALLOWED),
    (vb.PATH, PEER, "Ping"): ("", [], ALLOWED),
    (vb.PATH, PEER, "GetMachineId"): ("", [], ALLOWED),
    (vb.LMM_PATH, PROPS, "GetAll"): ("s", [vb.LMM_IFACE], ALLOWED),
    (vb.LMM_PATH, INTRO, "Introspect"): ("", [], ALLOWED),
    (vb.LMM_PATH, PEER, "Ping"): ("", [], ALLOWED),
    (vb.LMM_PATH, PEER, "GetMachineId"): ("", [], ALLOWED),
}
PROPERTY_METHODS = {"Get": ALLOWED, "Set": DENIED}

# (object path, interface, signal) -> (signature, forged arguments)
FORGED_SCOPE = f"vmp-forged-{os.getpid()}.slice"
FORGED_LMM = 7          # not a level the daemon sends (50, 100, 255): GLib passes the byte on
SIGNALS = {
    (vb.PATH, vb.IFACE, "Low"): ("su", [FORGED_SCOPE, 4242]),
    (vb.PATH, vb.IFACE, "Medium"): ("su", [FORGED_SCOPE, 4242]),
    (vb.PATH, vb.IFACE, "OOM"): ("su", [FORGED_SCOPE, 4242]),
    (vb.PATH, vb.IFACE, "Normal"): ("s", [FORGED_SCOPE]),
    (vb.PATH, vb.IFACE, "Simulated"): ("ss", [FORGED_SCOPE, "oom"]),     # marks a simulated level
    (vb.PATH, vb.IFACE, "Action"): ("tssssusbt", [1, "forged.service", "oom", "kill", "SIGKILL", 1, "ok", False, 1]),
    (vb.PATH, vb.IFACE, "Killed"): ("susts", ["forged.service", 1, "forged", 1 << 30, "forged by nobody"]),
    (vb.PATH, PROPS, "PropertiesChanged"): ("sa{sv}as", [vb.IFACE, {}, ["Level"]]),
    (vb.LMM_PATH, vb.LMM_IFACE, "LowMemoryWarning"): ("y", [FORGED_LMM]),
    (vb.LMM_PATH, PROPS, "PropertiesChanged"): ("sa{sv}as", [vb.LMM_IFACE, {}, []]),
}

OWN_FLAGS = {"none": 0, "do-not-queue": 4, "replace-existing": 2 | 1}

# Runs as nobody (or root): a JSON plan on stdin, JSON results on stdout.
ACTOR = r"""
import json, sys
import dbus, dbus.lowlevel, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
errors = []

def on_message(conn, msg):
    if isinstance(msg, dbus.lowlevel.ErrorMessage):
        args = msg.get_args_list()
        errors.append({"reply_serial": msg.get_reply_serial(), "error": msg.get_error_name(),
                       "message": str(args[0]) if args else ""})

bus.add_message_filter(on_message)

def plain(v):
    if isinstance(v, dbus.types.UnixFd):
        import os
        os.close(v.take())
        return "<fd>"
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    return int(v) if isinstance(v, int) else str(v)

def call(a, extra_value=None):
    m = dbus.lowlevel.MethodCallMessage(a["dest"], a["path"], a["iface"], a["member"])
    args = list(a["args"]) + ([extra_value] if extra_value is not None else [])
    if a["sig"]:
        m.append(*args, signature=a["sig"])
    try:
        reply = bus.send_message_with_reply_and_block(m, 10.0)
        return {"ok": True, "reply": plain(reply.get_args_list())}, reply
    except dbus.exceptions.DBusException as e:
        return {"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message()}, None

out = []
for a in json.load(sys.stdin):
    if a["kind"] == "call":
        res, _ = call(a)
    elif a["kind"] == "set":
        # The value Get returned, so that only the policy can refuse the Set.
        got, reply = call(dict(a, member="Get", sig="ss"))
        if not got["ok"]:
            res = {"ok": False, "error": "Get failed: " + got["error"], "message": got["message"]}
        else:
            res, _ = call(dict(a, sig="ssv"), reply.get_args_list()[0])
    elif a["kind"] == "signal":
        m = dbus.lowlevel.SignalMessage(a["path"], a["iface"], a["member"])
        if a.get("dest"):
            m.set_destination(a["dest"])
        m.append(*a["args"], signature=a["sig"])
        res = {"serial": bus.send_message(m)}
    out.append(dict(a, **res))

# Let errors sent back for unicast signals arrive.
loop = GLib.MainLoop()
GLib.timeout_add(800, loop.quit)
loop.run()
for r in out:
    if "serial" in r:
        r["errors"] = [e for e in errors if e["reply_serial"] == r["serial"]]
print(json.dumps({"unique_name": bus.get_unique_name(), "results": out}))
"""

NAIVE_RECEIVER = r"""
import json, sys
import dbus, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()

def on_signal(*args, **kw):
    print(json.dumps({"type": "signal", "sender": str(kw["sender"]), "path": str(kw["path"]),
                      "iface": str(kw["iface"]), "member": str(kw["member"]),
                      "args": [int(a) if isinstance(a, int) else str(a) for a in args]}), flush=True)

# No sender: every signal of these interfaces, whoever sends it.
for iface in sys.argv[1:]:
    bus.add_signal_receiver(on_signal, dbus_interface=iface, sender_keyword="sender", path_keyword="path",
                            interface_keyword="iface", member_keyword="member")
print(json.dumps({"type": "ready", "name": bus.get_unique_name()}), flush=True)
GLib.MainLoop().run()
"""


def act(plan, user="nobody"):
    cmd = (vb.NOBODY if user == "nobody" else []) + ["/usr/bin/python3", "-c", ACTOR]
    r = subprocess.run(cmd, input=json.dumps(plan), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    vt.check(r.returncode == 0, f"the {user} actor failed ({r.returncode}): {r.stderr[-3000:]}")
    return json.loads(r.stdout)


def parse_json(line):
    try:
        return json.loads(line)
    except ValueError:
        return None


def introspect(path):
    """{interface: {"methods": set, "properties": set, "signals": set}} as nobody."""
    r = vb.busctl("--json=short", "call", vb.NAME, path, INTRO, "Introspect", user="nobody")
    xml = json.loads(r.stdout)["data"][0]
    out = {}
    for i in ET.fromstring(xml).findall("interface"):
        out[i.get("name")] = {kind: {e.get("name") for e in i.findall(tag)}
                              for kind, tag in (("methods", "method"), ("properties", "property"),
                                                ("signals", "signal"))}
    return out


def check_table_covers(objects):
    offered = {(p, i, m) for p, ifs in objects.items() for i, d in ifs.items() for m in d["methods"]}
    offered -= {(p, PROPS, m) for p in objects for m in PROPERTY_METHODS}
    missing = sorted(offered - set(METHODS))
    stale = sorted(set(METHODS) - offered)
    vt.check(not missing, f"methods offered by the daemon without a row in METHODS (add one, with what "
                          f"nobody may do): {missing}")
    vt.check(not stale, f"rows in METHODS for methods the daemon does not offer: {stale}")
    sig_offered = {(p, i, s) for p, ifs in objects.items() for i, d in ifs.items() for s in d["signals"]}
    vt.check(sig_offered == set(SIGNALS), f"signals offered {sorted(sig_offered)} != SIGNALS {sorted(SIGNALS)}")
    vt.log(f"table: {len(METHODS)} method rows and {len(SIGNALS)} signal rows match the introspection "
           f"of {', '.join(objects)}")


def outcome(res):
    if res["ok"]:
        return ALLOWED
    if res["error"] == ACCESS_DENIED and vb.denied_send_message() in res["message"]:
        return DENIED
    return f"failed otherwise: {res['error']}: {res['message']}"


def check_methods_and_properties(objects, dests):
    plan = []
    for (path, iface, member), (sig, args, want) in sorted(METHODS.items()):
        for dest in dests:
            plan.append({"kind": "call", "dest": dest, "path": path, "iface": iface, "member": member,
                         "sig": sig, "args": args, "want": want, "row": f"{path} {iface}.{member}"})
    n_props = 0
    for path, ifs in sorted(objects.items()):
        for iface, d in sorted(ifs.items()):
            for prop in sorted(d["properties"]):
                n_props += 1
                for dest in dests:
                    plan.append({"kind": "call", "dest": dest, "path": path, "iface": PROPS, "member": "Get",
                                 "sig": "ss", "args": [iface, prop], "want": PROPERTY_METHODS["Get"],
                                 "row": f"{path} Get {iface}.{prop}"})
                    plan.append({"kind": "set", "dest": dest, "path": path, "iface": PROPS, "member": "Set",
                                 "args": [iface, prop], "want": PROPERTY_METHODS["Set"],
                                 "row": f"{path} Set {iface}.{prop}"})
    for name in (vb.NAME, vb.LMM_NAME):
        for flag, value in OWN_FLAGS.items():
            plan.append({"kind": "call", "dest": "org.freedesktop.DBus", "path": "/org/freedesktop/DBus",
                         "iface": "org.freedesktop.DBus", "member": "RequestName", "sig": "su",
                         "args": [name, value], "want": DENIED, "row": f"RequestName {name} {flag}"})
    results = act(plan)["results"]
    bad = []
    rows = {}
    for r in results:
        got = outcome(r)
        if r["member"] == "RequestName" and not r["ok"] and r["error"] == ACCESS_DENIED:
            got = DENIED        # "… is not allowed to own the service …"
        rows.setdefault(r["row"], []).append(got)
        if got != r["want"]:
            bad.append(f"{r['row']} via {r['dest']}: expected {r['want']}, got {got}")
    for row, got in rows.items():
        print(f"  nobody: {'/'.join(sorted(set(got)))} x{len(got)}  {row}", file=sys.stderr)
    vt.check(not bad, f"{len(bad)} of {len(results)} rows differ:\n  " + "\n  ".join(bad))
    vt.log(f"{len(results)} calls as nobody as the table says ({len(METHODS)} method rows, {n_props} properties "
           f"x Get/Set, {2 * len(OWN_FLAGS)} RequestName; each through {len(dests)} destinations)")


def forge_plan(targets):
    plan = []
    rows = [(p, i, m, sig, args) for (p, i, m), (sig, args) in sorted(SIGNALS.items())]
    for path, iface, member, sig, args in rows:
        for dest in [None] + targets:
            plan.append({"kind": "signal", "dest": dest, "path": path, "iface": iface, "member": member,
                         "sig": sig, "args": args})
    return plan


def check_forgery(naive, client, glib, daemon_name, memcg, data, d):
    targets = [naive.ready["name"], glib.name]
    forged = act(forge_plan(targets))
    nobody_name = forged["unique_name"]
    unicast = [r for r in forged["results"] if r["dest"]]
    refused = [r for r in unicast if any(e["error"] == ACCESS_DENIED for e in r["errors"])]
    vt.log(f"nobody ({nobody_name}) forged {len(forged['results'])} signals "
           f"({len(unicast)} unicast, {len(refused)} of them refused with AccessDenied)")
    if vb.bus_kind() == "dbus-daemon":
        vt.check(len(refused) == len(unicast), "unicast forged signals not refused: "
                 f"{[(r['member'], r['dest']) for r in unicast if r not in refused]}")
    else:
        # dbus-broker answers errors to method calls only (a signal has no
        # serial to reply to: message_read_serial() in its src/dbus/message.h),
        # so a refused signal is dropped silently; that none was delivered is
        # checked below, for both buses.
        vt.check(not refused, f"dbus-broker replied to a signal: {refused[:3]}")
    # Root from a connection that is not the daemon's: the policy lets root send.
    root = act([{"kind": "signal", "dest": dest, "path": vb.LMM_PATH, "iface": vb.LMM_IFACE,
                 "member": "LowMemoryWarning", "sig": "y", "args": [FORGED_LMM]} for dest in (None, glib.name)],
               user="root")
    root_name = root["unique_name"]
    time.sleep(1.0)

    from_nobody = [e for e in naive.snapshot() if e["type"] == "signal" and e["sender"] == nobody_name]
    vt.check(not from_nobody, f"the naive receiver got nobody's forgeries: {from_nobody[:3]}")
    from_root = [e for e in naive.snapshot() if e["type"] == "signal" and e["sender"] == root_name]
    vt.check(from_root, f"the naive receiver did not get root's ({root_name}) forged LowMemoryWarning, so it "
                        f"proves nothing: it got {naive.snapshot()}; root's sends: {root['results']}")
    vt.log(f"naive receiver: nothing from nobody, {len(from_root)} forged LowMemoryWarning from root "
           f"({root_name}, not the daemon {daemon_name})")
    # The daemon's own signals may come meanwhile (the system scope hears every
    # memcg on the machine): the forged ones are told by their arguments.
    got = [e for e in client.snapshot() if (e["type"] == "signal" and e.get("scope") == FORGED_SCOPE)
           or (e["type"] == "lmm" and e.get("level") == FORGED_LMM)
           or (e["type"] == "signal" and e.get("member") == "Killed")]
    vt.check(not got, f"the sd-bus client (sender match) received forged signals: {got[:3]}")
    warnings = [e for e in glib.snapshot() if e["type"] == "warning" and e["level"] == FORGED_LMM]
    vt.check(not warnings, f"Gio.MemoryMonitor emitted low-memory-warning for a forgery: {warnings}")
    vt.log("GLib: no low-memory-warning from nobody's or root's forgeries")

    t0 = vt.now_usec()
    load = vt.Load(memcg, "stream", data.path).start()
    # LOW for this load; a level another memcg of the machine caused may be in
    # force already: then GLib gets the daemon's next change, or its repeat
    # (at most every 15 s), all three of them at a level the daemon announced.
    w = glib.wait_for(lambda e: e["type"] == "warning" and e["recv_usec"] >= t0, 20,
                      "a low-memory-warning from the real daemon")
    load.stop()
    lmm_of = {"low": 50, "medium": 100, "oom": 255}
    ann = d.find(lambda e: vt.is_level("-.slice")(e) and lmm_of[e["level"]] == w["level"]
                 and e["t_usec"] <= w["recv_usec"])
    vt.check(ann, f"GLib's warning {w['level']} matches no announcement of the daemon before it")
    client.wait_for(lambda e: e["type"] == "lmm" and e["level"] == w["level"] and e["recv_usec"] >= t0, 5,
                    "the daemon's LowMemoryWarning at the sd-bus client")
    naive.wait_for(lambda e: e["type"] == "signal" and e["sender"] == daemon_name
                   and e["member"] == "LowMemoryWarning" and e["args"] == [w["level"]], 5,
                   "the daemon's LowMemoryWarning at the naive receiver")
    vt.log(f"the real daemon: GLib warning {w['level']} {(w['recv_usec'] - ann[-1]['t_usec']) / 1000:.1f} ms "
           f"after its announcement of {ann[-1]['level']}; the sd-bus client and the naive receiver got it too")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.need_gi_and_dbus()
    vb.SystemBus().start()
    with vt.Memcg("bus-unpriv", limit_mib=128) as memcg, vt.DataFile("bus-unpriv", 256) as data:
        # The load is a small memcg at its own limit; -.slice hears it only with any-cgroup.
        d = vt.Daemon(config=vb.FAST_LEVELS, system_pressure="any-cgroup").start()
        daemon_name = vb.wait_name(vb.NAME)
        vt.check(vb.wait_name(vb.LMM_NAME) == daemon_name, "the daemon does not own LowMemoryMonitor")

        objects = {p: introspect(p) for p in (vb.PATH, vb.LMM_PATH)}
        check_table_covers(objects)
        check_methods_and_properties(objects, [vb.NAME, vb.LMM_NAME, daemon_name])
        vt.check(vb.get_property("Simulations") == 0, "a Simulate() of nobody's was carried out")
        vt.check(not d.find(lambda e: e["type"] == "level" and "simulated" in e),
                 "nobody's Simulate() made the daemon announce a level")
        vt.check("Configuration reloaded" not in d.stderr_text(), "nobody's Reload() was carried out")

        naive = vb.LineProcess(["/usr/bin/python3", "-c", NAIVE_RECEIVER, vb.IFACE, vb.LMM_IFACE, PROPS],
                               "naive receiver", parse_json)
        naive.ready = naive.wait_for(lambda e: e["type"] == "ready", 10, "ready")
        client = vb.Client("--lmm")
        glib = vb.GlibClient()
        check_forgery(naive, client, glib, daemon_name, memcg, data, d)
        vt.check(vb.name_owner(vb.NAME) == daemon_name and vb.name_owner(vb.LMM_NAME) == daemon_name,
                 "the names changed owner")
        glib.stop()
        client.stop()
        naive.stop()
        d.stop()


vt.run(main)
