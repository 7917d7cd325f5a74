#include "collector/nvtx_decode.h"

#include <generated_nvtx_meta.h>

#include <cwchar>

namespace reverie::collector {
namespace {

// NVTX wide strings as UTF-8 would need a locale; a lossy ASCII fold keeps
// the names readable without touching the host's locale state.
std::string FoldWide(const wchar_t* w) {
  std::string out;
  if (w == nullptr) return out;
  for (; *w != 0; ++w) out += (*w > 0 && *w < 128) ? static_cast<char>(*w) : '?';
  return out;
}

std::string MessageOf(const nvtxEventAttributes_t* attr, NvtxStrings* strings) {
  if (attr == nullptr) return "";
  switch (attr->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return attr->message.ascii != nullptr ? attr->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
      return FoldWide(attr->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return strings->Lookup(attr->message.registered);
    default:
      return "";
  }
}

template <typename P>
const P* Params(const CUpti_NvtxData* data) {
  return static_cast<const P*>(data->functionParams);
}

}  // namespace

NvtxAction DecodeNvtxCallback(CUpti_CallbackId cbid, const CUpti_NvtxData* data,
                              NvtxStrings* strings) {
  NvtxAction a;
  if (data == nullptr) return a;
  const bool has_params = data->functionParams != nullptr;
  auto returned_id = [&]() -> uint64_t {
    return data->functionReturnValue != nullptr
               ? *static_cast<const nvtxRangeId_t*>(data->functionReturnValue)
               : 0;
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      a.type = NvtxAction::kPush;
      if (has_params && Params<nvtxRangePushA_params>(data)->message != nullptr) {
        a.name = Params<nvtxRangePushA_params>(data)->message;
      }
      return a;
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      a.type = NvtxAction::kPush;
      if (has_params) a.name = FoldWide(Params<nvtxRangePushW_params>(data)->message);
      return a;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      a.type = NvtxAction::kPush;
      if (has_params) a.name = MessageOf(Params<nvtxRangePushEx_params>(data)->eventAttrib, strings);
      return a;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      a.type = NvtxAction::kPush;
      if (has_params) {
        a.name = MessageOf(Params<nvtxDomainRangePushEx_params>(data)->core.eventAttrib, strings);
      }
      return a;
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      a.type = NvtxAction::kPop;
      return a;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      a.type = NvtxAction::kStart;
      if (has_params && Params<nvtxRangeStartA_params>(data)->message != nullptr) {
        a.name = Params<nvtxRangeStartA_params>(data)->message;
      }
      a.id = returned_id();
      return a;
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      a.type = NvtxAction::kStart;
      if (has_params) a.name = FoldWide(Params<nvtxRangeStartW_params>(data)->message);
      a.id = returned_id();
      return a;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      a.type = NvtxAction::kStart;
      if (has_params) a.name = MessageOf(Params<nvtxRangeStartEx_params>(data)->eventAttrib, strings);
      a.id = returned_id();
      return a;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      a.type = NvtxAction::kStart;
      if (has_params) {
        a.name = MessageOf(Params<nvtxDomainRangeStartEx_params>(data)->core.eventAttrib, strings);
      }
      a.id = returned_id();
      return a;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      a.type = NvtxAction::kEnd;
      if (has_params) a.id = Params<nvtxRangeEnd_params>(data)->id;
      return a;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      a.type = NvtxAction::kEnd;
      if (has_params) a.id = Params<nvtxDomainRangeEnd_params>(data)->core.id;
      return a;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
      if (has_params && data->functionReturnValue != nullptr) {
        const char* s = Params<nvtxDomainRegisterStringA_params>(data)->string;
        strings->Register(*static_cast<const nvtxStringHandle_t*>(data->functionReturnValue),
                          s != nullptr ? s : "");
      }
      return a;
    default:
      return a;
  }
}

}  // namespace reverie::collector
