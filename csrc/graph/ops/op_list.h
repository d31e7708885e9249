/* Every ONNX operator type the graph runtime loads, one row each: SB_OP(Name)
 * names the sb_op_def sb_op_Name, defined in its family's folder
 * (graph/ops/<family>/). graph/ops/registry.c includes this list; adding an
 * operator adds one row here (docs/design.md, "Adding an operator").
 * No include guard: it is included with SB_OP defined. */

/* shape/ */
SB_OP(Shape)
SB_OP(Size)
SB_OP(Identity)
SB_OP(Reshape)
SB_OP(Flatten)
SB_OP(Squeeze)
SB_OP(Unsqueeze)
SB_OP(Dropout)
SB_OP(Constant)
SB_OP(ConstantOfShape)
SB_OP(Cast)
SB_OP(CastLike)
SB_OP(Range)
SB_OP(Concat)
SB_OP(Split)
SB_OP(Slice)
SB_OP(Transpose)
SB_OP(DepthToSpace)
SB_OP(SpaceToDepth)
SB_OP(Gather)
SB_OP(Expand)
SB_OP(Tile)
SB_OP(Pad)
