// Op type -> display category, Netron's category names (the header colour is picked by
// `node-cat-<category>` in style/app.css). Horizon ops follow their ONNX counterparts; HzCalibration
// has its own category so it reads as a quantizer, not as a layer.
const TABLE = {
  layer: 'Conv ConvTranspose ConvInteger Gemm MatMul MatMulInteger QLinearConv QLinearMatMul Einsum LSTM GRU RNN ' +
    'HzPreprocess HzSQuantizedConv Attention MultiHeadAttention',
  activation: 'Relu LeakyRelu PRelu Sigmoid HardSigmoid Tanh Elu Selu Celu Softplus Softsign HardSwish Mish Gelu ' +
    'ThresholdedRelu Clip Softmax LogSoftmax Hardmax HzSwish HzHardSwish HzMish HzGelu HzPRelu HzSoftmax HzLut',
  pool: 'MaxPool AveragePool GlobalMaxPool GlobalAveragePool LpPool GlobalLpPool MaxRoiPool RoiAlign MaxUnpool',
  normalization: 'BatchNormalization InstanceNormalization LayerNormalization GroupNormalization LpNormalization ' +
    'LRN MeanVarianceNormalization SimplifiedLayerNormalization',
  dropout: 'Dropout',
  shape: 'Reshape Flatten Squeeze Unsqueeze Shape Size Expand Transpose DepthToSpace SpaceToDepth HzDepthToSpace ' +
    'HzSpaceToDepth HzChannelShuffle',
  tensor: 'Concat Split Slice Gather GatherElements GatherND Scatter ScatterND ScatterElements Tile Pad HzPad ' +
    'Resize Upsample HzResize11 Identity Cast CastLike NonZero TopK Where OneHot Range ConstantOfShape',
  quantization: 'QuantizeLinear DequantizeLinear DynamicQuantizeLinear HzCalibration HzQuantize HzDequantize',
  data: 'Constant',
};

const CATEGORY = new Map();
for (const [category, ops] of Object.entries(TABLE)) for (const op of ops.split(/\s+/)) CATEGORY.set(op, category);

// '' = no category (dark grey header, like Netron's elementwise/math ops).
export const categoryOf = (opType) => CATEGORY.get(opType) ?? '';
