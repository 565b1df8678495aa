"""Prints deeply nested MLIR on stdout, for the stack-depth tests.
usage: tools-deep.py regions|tuple|scf|chain DEPTH"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
if kind == "regions":  # unregistered ops, each with a one-op region
    print('"x.op"() ({\n' * n + '}) : () -> ()\n' * n)
elif kind == "tuple":
    print("func.func private @f(" + "tuple<" * n + "i32" + ">" * n + ")")
elif kind == "scf":  # registered ops: scf.execute_region inside a function
    print("func.func @f() {\n" + "scf.execute_region {\n" * n +
          "scf.yield\n}\n" + "scf.yield\n}\n" * (n - 1) + "return\n}")
elif kind == "chain":  # no brackets, but the affine parser recurses per term
    print("#map = affine_map<(d0) -> (" + " + ".join(["d0"] * n) + ")>\n"
          "func.func private @f() attributes {m = #map}")
else:
    sys.exit("unknown kind " + kind)
