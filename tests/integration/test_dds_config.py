"""Integration (issue 18): `xrgate --check` refuses bad dds adapter keys with file:line:column
and the offending value (topics, world_frame, topic_prefix, qos, config_file, nothing to do),
and accepts a full valid section."""
import os
import subprocess
import tempfile

from xgtest import BIN
import ddslib as dl


def check(body):
    tmp = tempfile.TemporaryDirectory(prefix="xrgate-dds-conf-")
    path = os.path.join(tmp.name, "x.yaml")
    with open(path, "w") as f:
        f.write("adapters:\n  - name: ros\n    type: dds\n" + body)
    r = subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                       timeout=10)
    tmp.cleanup()
    return r.returncode, (r.stdout + r.stderr).replace(path, "x.yaml")


def main():
    dl.require()
    cases = [
        ('    topics: ["/robot//pose"]\n',
         "x.yaml:4:14: topics: '/robot//pose' is not a ROS 2 topic name (empty token ('//'))"),
        ('    topics: ["/a/1b"]\n',
         "x.yaml:4:14: topics: '/a/1b' is not a ROS 2 topic name (a token starting with a "
         "digit)"),
        ('    topics: ["/a", "a"]\n', "x.yaml:4:20: topics: 'a' is listed twice"),
        ("    world_frame: \"1world\"\n",
         "x.yaml:4:18: world_frame '1world' is not a TF frame id (1-127 bytes of [A-Za-z0-9_/], "
         "no empty token, no token starting with a digit)"),
        ("    topic_prefix: \"/x y\"\n",
         "x.yaml:4:19: topic_prefix '/x y' is not a ROS 2 name of at most 128 bytes (a character "
         "outside [A-Za-z0-9_/])"),
        ("    qos: fast\n", "x.yaml:4:10: qos 'fast' must be sensor_data or reliable"),
        ("    config_file: /nonexistent/cyclone.xml\n",
         "x.yaml:4:18: config_file '/nonexistent/cyclone.xml': No such file or directory"),
        ("    publish_tf: false\n    read_tf: false\n",
         "dds adapter 'ros' neither publishes nor reads anything (publish_tf, pose_topics, "
         "twist_topics, read_tf and topics are all off)"),
        ("    domain_id: 233\n", "x.yaml:4:16: "),
        # longer than the limits (the reason was an uninitialised pointer before)
        (f'    topics: ["/{"a" * 300}"]\n',
         f"x.yaml:4:14: topics: '/{'a' * 79}...' is not a ROS 2 topic name (longer than 256 "
         "bytes)"),
        (f'    topic_prefix: "/{"b" * 200}"\n',
         f"x.yaml:4:19: topic_prefix '/{'b' * 79}...' is not a ROS 2 name of at most 128 "
         "bytes (longer than 128 bytes)"),
        # issue 30: read_include / read_exclude, the syntax of include / exclude
        ("    read_include: {a: b}\n", "x.yaml:4:19: 'read_include' must be a glob or a list of "
         "globs"),
        ("    read_exclude: [[x]]\n", "x.yaml:4:20: 'read_exclude' items must be strings"),
    ]
    for body, want in cases:
        rc, out = check(body)
        assert rc != 0 and want in out, (body, rc, out)
    rc, out = check('    domain_id: 42\n    world_frame: /map\n    topics: ["/robot/pose", '
                    '"drone/pose"]\n    pose_topics: true\n    twist_topics: true\n'
                    '    topic_prefix: /lab/xrgate\n    qos: reliable\n    rate_hz: 90\n'
                    '    include: ["*"]\n    read_include: ["robot/*", "drone/*"]\n'
                    '    read_exclude: "*/debug"\n')
    assert rc == 0, out
    print("dds config: ok")


if __name__ == "__main__":
    main()
