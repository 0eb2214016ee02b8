#pragma once

// A non-owning reference to a callable, for callbacks that run inside a call and are not kept
// (std::function would allocate and copy). The referenced callable must outlive the call.

#include <type_traits>
#include <utility>

namespace az::shm {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, Args...>)
      FunctionRef(F&& f) {  // NOLINT: implicit by design, like std::function
    using Callable = std::remove_reference_t<F>;
    if constexpr (std::is_function_v<Callable>) {
      // A plain function: keep its address (function and object pointers convert on POSIX).
      object_ = reinterpret_cast<void*>(&f);
      call_ = [](void* object, Args... args) -> R {
        return reinterpret_cast<Callable*>(object)(std::forward<Args>(args)...);
      };
    } else {
      object_ = const_cast<void*>(static_cast<const void*>(&f));
      call_ = [](void* object, Args... args) -> R {
        return (*static_cast<Callable*>(object))(std::forward<Args>(args)...);
      };
    }
  }

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace az::shm
